"""The six CLUES tasks as data, and the function that installs them.

``install_clues_tasks`` creates what is missing and, by default, leaves what
exists alone: descriptions and label help texts are the admin's to edit once
installed. ``overwrite=True`` resets the catalog fields (not examples) to the
text below. Label *names* are part of the data contract (gold answers use
them), so a missing label is always added back.

The German texts live in ``catalog_de`` (``0010_clues_german_texts`` installed a frozen copy of them and
of SQuAD's instructions). The data migration ``0002_clues_tasks`` installed these tasks from its own
frozen copy of the definitions, so editing them here changes what the
commands install from now on (``import_clues``, ``overwrite=True``), never
what ``migrate`` does.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from tasks_app.catalog_de import GERMAN
from tasks_app.models import Label, Task

NER_QUESTION_TYPES = [
    {"code": "PER", "name": "People", "question": "List all the people names in the context"},
    {"code": "ORG", "name": "Organizations", "question": "List all the organizations in the context"},
    {"code": "LOC", "name": "Locations", "question": "List all the locations in the context"},
]


@dataclass(frozen=True)
class LabelDefinition:
    name: str
    definition: str
    example: str


@dataclass(frozen=True)
class TaskDefinition:
    slug: str
    name: str
    kind: str  # Task.Kind value
    group: str  # Task.Group value
    folder: str  # the release folder
    prefix: str  # the release file prefix
    description: str
    instructions: str
    multiple_spans: bool = False
    # Nested spans in one answer. CoNLL-2003 and WikiANN annotate flat, non-nested entities; SQuAD's gold
    # lists every annotator's answer, which often nest ("complexity classes" in "some complexity classes").
    overlapping_spans: bool = False
    # False where the gold is never empty (ReCoRD): no "No answer" for the worker.
    empty_answer_allowed: bool = True
    question_types: list = field(default_factory=list)
    labels: tuple[LabelDefinition, ...] = ()
    display_order: int = 100
    # What workers see instead of the dataset's name, and the question shown instead of the examples' own.
    worker_title: str = ""
    worker_question: str = ""


SQUAD_INSTRUCTIONS = (
    "Select the part of the paragraph that answers the question. An answer is often accepted in several "
    'wordings, a shorter and a longer one (e.g. "1794 and 1802" and "between 1794 and 1802"): for full '
    "credit, select each wording (selections may overlap), and each answer if there are several. Some "
    "questions have no answer in the paragraph: then answer that there is none rather than guessing."
)

CLUES_TASKS: tuple[TaskDefinition, ...] = (
    TaskDefinition(
        slug="sst2",
        worker_title="Movie review sentiment",
        name="SST-2",
        kind="classification",
        group="sentence_classification",
        folder="SST-2",
        prefix="sst",
        description=(
            "Each item is a short piece of a film review: sometimes a whole sentence, often only a few words. "
            "Decide whether the writer feels positive or negative about the film."
        ),
        instructions=(
            "Read the text and choose the sentiment it expresses. Fragments count too: judge the words you see."
        ),
        labels=(
            LabelDefinition(
                "positive",
                "The text praises the film or expresses enjoyment.",
                "a warm, funny story that stayed with me for days",
            ),
            LabelDefinition(
                "negative",
                "The text criticises the film or expresses disappointment.",
                "two hours of tired jokes and wooden acting",
            ),
        ),
        display_order=10,
    ),
    TaskDefinition(
        slug="mnli",
        worker_title="How do two sentences relate?",
        worker_question="What is the relationship between these sentences?",
        name="MNLI",
        kind="classification",
        group="sentence_classification",
        folder="MNLI",
        prefix="mnli",
        description=(
            "Each item is a pair of sentences: a premise and a hypothesis. Decide whether the premise "
            "makes the hypothesis true (entailment), makes it false (contradiction), or neither (neutral)."
        ),
        instructions=(
            "Assume the premise is true. Then ask: must the hypothesis be true, must it be false, or could it go "
            "either way?"
        ),
        labels=(
            LabelDefinition(
                "entailment",
                "If the premise is true, the hypothesis must be true as well.",
                "Premise: The shop closes at six every evening. Hypothesis: The shop is not open at midnight.",
            ),
            LabelDefinition(
                "neutral",
                "The hypothesis might be true or false; the premise does not decide it.",
                "Premise: Maya took the early train to work. Hypothesis: Maya enjoys her job.",
            ),
            LabelDefinition(
                "contradiction",
                "If the premise is true, the hypothesis must be false.",
                "Premise: The lake froze solid last night. Hypothesis: The lake has never frozen.",
            ),
        ),
        display_order=20,
    ),
    TaskDefinition(
        slug="conll03",
        worker_title="Find names in news sentences",
        name="CoNLL-2003",
        kind="span",
        group="ner",
        folder="CoNLL2003",
        prefix="conll",
        description=(
            "Each item is a sentence from a news wire report and a question asking for one type of name: people, "
            "organizations or locations. Mark every name of that type in the sentence."
        ),
        instructions=(
            "Select each matching name as a span of the sentence; a name may appear more than once. "
            "If there is none, answer that the set is empty."
        ),
        multiple_spans=True,
        question_types=NER_QUESTION_TYPES,
        display_order=30,
    ),
    TaskDefinition(
        slug="wikiann",
        worker_title="Find names in short texts",
        name="WikiANN",
        kind="span",
        group="ner",
        folder="WikiANN_EN",
        prefix="wikiann",
        description=(
            "Each item is a short fragment of a Wikipedia page and a question asking for one type of name: people, "
            "organizations or locations. Mark every name of that type in the fragment."
        ),
        instructions=(
            "Select each matching name as a span; keep the whole name (e.g. a full team or album title). "
            "If there is none, answer that the set is empty."
        ),
        multiple_spans=True,
        question_types=NER_QUESTION_TYPES,
        display_order=40,
    ),
    TaskDefinition(
        slug="squad2",
        worker_title="Answer questions about a paragraph",
        name="SQuAD 2.0",
        kind="span",
        group="mrc",
        folder="SQuAD-v2",
        prefix="squad-v2",
        description=(
            "Each item is a paragraph from Wikipedia and a question about it. Mark the part of the paragraph "
            "that answers the question, or say that the paragraph does not answer it."
        ),
        # As S1 scores it: the gold set is every wording the annotators gave, so full credit needs each.
        instructions=SQUAD_INSTRUCTIONS,
        # The paper's SQuAD page (its Fig. 3) takes zero, one or more answers, as NER does; a single span
        # could not reach full credit where the gold lists several texts.
        multiple_spans=True,
        overlapping_spans=True,  # the gold's alternative answers nest: full credit needs each of them
        display_order=50,
    ),
    TaskDefinition(
        slug="record",
        worker_title="Fill in the missing name",
        name="ReCoRD",
        kind="span",
        group="mrc",
        folder="ReCoRD",
        prefix="record",
        description=(
            "Each item is a news article with its highlights and a sentence in which one name was replaced by "
            "@placeholder. Find the name in the article that belongs in place of @placeholder."
        ),
        instructions="Select one mention in the article of the person, place or thing that fills @placeholder.",
        multiple_spans=False,
        empty_answer_allowed=False,  # every ReCoRD item has an answer
        display_order=60,
    ),
)

BY_SLUG = {t.slug: t for t in CLUES_TASKS}
FOLDER_TO_SLUG = {t.folder: t.slug for t in CLUES_TASKS}
SLUG_TO_FOLDER = {t.slug: t.folder for t in CLUES_TASKS}

_TASK_FIELDS = (
    "name",
    "kind",
    "group",
    "description",
    "instructions",
    "multiple_spans",
    "overlapping_spans",
    "empty_answer_allowed",
    "question_types",
    "display_order",
    "worker_title",
    "worker_question",
)


def install_clues_tasks(*, overwrite: bool = False, slugs: Collection[str] | None = None) -> list[Task]:
    """Create the CLUES tasks that are missing; with ``overwrite``, reset existing ones to this file."""
    installed = []
    for definition in CLUES_TASKS:
        if slugs is not None and definition.slug not in slugs:
            continue
        values = {name: getattr(definition, name) for name in _TASK_FIELDS}
        values["question_types"] = [dict(qt) for qt in definition.question_types]
        values["translations"] = {"de": GERMAN[definition.slug]}
        task = Task.objects.filter(slug=definition.slug).first()
        if task is None:
            task = Task.objects.create(slug=definition.slug, **values)
        elif overwrite:
            for name, value in values.items():
                setattr(task, name, value)
            task.save()
        elif not (task.translations or {}).get("de"):  # a language missing is added, as a missing label is
            task.translations = {**(task.translations or {}), "de": GERMAN[definition.slug]}
            task.save(update_fields=["translations"])
        _install_labels(task, definition, overwrite=overwrite)
        installed.append(task)
    return installed


def _install_labels(task: Task, definition: TaskDefinition, *, overwrite: bool) -> None:
    existing = {label.name: label for label in Label.objects.filter(task=task)}
    for position, label in enumerate(definition.labels):
        values = {"definition": label.definition, "example": label.example, "position": position}
        current = existing.get(label.name)
        if current is None:
            Label.objects.create(task=task, name=label.name, **values)
        elif overwrite:
            for name, value in values.items():
                setattr(current, name, value)
            current.save()
