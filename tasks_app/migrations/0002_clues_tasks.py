"""Install the six CLUES tasks so they exist right after ``migrate``.

The task definitions are frozen here as they were when this migration was
written, and only the historical models are used: a migration must give the
same database whatever ``tasks_app.catalog`` says later. (Catalog changes
after this point reach existing databases through
``install_clues_tasks(overwrite=True)`` or a new migration, never by editing
this one.)

Missing tasks are created and missing labels added; existing tasks and
labels are left as the admin edited them (no overwrite). Reversing does
nothing: deleting tasks would delete their examples and answers.
"""

from django.db import migrations

_NER_QUESTION_TYPES = [
    {"code": "PER", "name": "People", "question": "List all the people names in the context"},
    {"code": "ORG", "name": "Organizations", "question": "List all the organizations in the context"},
    {"code": "LOC", "name": "Locations", "question": "List all the locations in the context"},
]

TASKS = [
    {
        "slug": "sst2",
        "name": "SST-2",
        "kind": "classification",
        "group": "sentence_classification",
        "description": (
            "Each item is a short piece of a film review: sometimes a whole sentence, often only a few words. "
            "Decide whether the writer feels positive or negative about the film."
        ),
        "instructions": (
            "Read the text and choose the sentiment it expresses. Fragments count too: judge the words you see."
        ),
        "multiple_spans": False,
        "question_types": [],
        "display_order": 10,
        "labels": [
            {
                "name": "positive",
                "definition": "The text praises the film or expresses enjoyment.",
                "example": "a warm, funny story that stayed with me for days",
            },
            {
                "name": "negative",
                "definition": "The text criticises the film or expresses disappointment.",
                "example": "two hours of tired jokes and wooden acting",
            },
        ],
    },
    {
        "slug": "mnli",
        "name": "MNLI",
        "kind": "classification",
        "group": "sentence_classification",
        "description": (
            "Each item is a pair of sentences: a premise and a hypothesis. Decide whether the premise makes the "
            "hypothesis true (entailment), makes it false (contradiction), or neither (neutral)."
        ),
        "instructions": (
            "Assume the premise is true. Then ask: must the hypothesis be true, must it be false, or could it go "
            "either way?"
        ),
        "multiple_spans": False,
        "question_types": [],
        "display_order": 20,
        "labels": [
            {
                "name": "entailment",
                "definition": "If the premise is true, the hypothesis must be true as well.",
                "example": (
                    "Premise: The shop closes at six every evening. Hypothesis: The shop is not open at midnight."
                ),
            },
            {
                "name": "neutral",
                "definition": "The hypothesis might be true or false; the premise does not decide it.",
                "example": "Premise: Maya took the early train to work. Hypothesis: Maya enjoys her job.",
            },
            {
                "name": "contradiction",
                "definition": "If the premise is true, the hypothesis must be false.",
                "example": "Premise: The lake froze solid last night. Hypothesis: The lake has never frozen.",
            },
        ],
    },
    {
        "slug": "conll03",
        "name": "CoNLL-2003",
        "kind": "span",
        "group": "ner",
        "description": (
            "Each item is a sentence from a news wire report and a question asking for one type of name: people, "
            "organizations or locations. Mark every name of that type in the sentence."
        ),
        "instructions": (
            "Select each matching name as a span of the sentence; a name may appear more than once. If there is "
            "none, answer that the set is empty."
        ),
        "multiple_spans": True,
        "question_types": _NER_QUESTION_TYPES,
        "display_order": 30,
        "labels": [],
    },
    {
        "slug": "wikiann",
        "name": "WikiANN",
        "kind": "span",
        "group": "ner",
        "description": (
            "Each item is a short fragment of a Wikipedia page and a question asking for one type of name: "
            "people, organizations or locations. Mark every name of that type in the fragment."
        ),
        "instructions": (
            "Select each matching name as a span; keep the whole name (e.g. a full team or album title). If there "
            "is none, answer that the set is empty."
        ),
        "multiple_spans": True,
        "question_types": _NER_QUESTION_TYPES,
        "display_order": 40,
        "labels": [],
    },
    {
        "slug": "squad2",
        "name": "SQuAD 2.0",
        "kind": "span",
        "group": "mrc",
        "description": (
            "Each item is a paragraph from Wikipedia and a question about it. Mark the shortest part of the "
            "paragraph that answers the question, or say that the paragraph does not answer it."
        ),
        "instructions": (
            "Select one span of the paragraph. Some questions have no answer in the paragraph: then answer that "
            "there is none rather than guessing."
        ),
        "multiple_spans": False,
        "question_types": [],
        "display_order": 50,
        "labels": [],
    },
    {
        "slug": "record",
        "name": "ReCoRD",
        "kind": "span",
        "group": "mrc",
        "description": (
            "Each item is a news article with its highlights and a sentence in which one name was replaced by "
            "@placeholder. Find the name in the article that belongs in place of @placeholder."
        ),
        "instructions": "Select one mention in the article of the person, place or thing that fills @placeholder.",
        "multiple_spans": False,
        "question_types": [],
        "display_order": 60,
        "labels": [],
    },
]


def install(apps, schema_editor):
    task_model = apps.get_model("tasks_app", "Task")
    label_model = apps.get_model("tasks_app", "Label")
    for definition in TASKS:
        values = {key: value for key, value in definition.items() if key not in ("slug", "labels")}
        values["question_types"] = [dict(qt) for qt in values["question_types"]]
        task = task_model.objects.filter(slug=definition["slug"]).first()
        if task is None:
            task = task_model.objects.create(slug=definition["slug"], **values)
        existing = set(label_model.objects.filter(task=task).values_list("name", flat=True))
        for position, label in enumerate(definition["labels"]):
            if label["name"] not in existing:
                label_model.objects.create(task=task, position=position, **label)


class Migration(migrations.Migration):
    dependencies = [("tasks_app", "0001_initial")]

    operations = [migrations.RunPython(install, migrations.RunPython.noop)]
