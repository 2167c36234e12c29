"""Every worker-facing page, rendered in a given language: the list the translation test walks.

A page is a function ``(language) -> Rendered``; ``PAGES`` names them. A page of a study gets the language
from the study (and sends another language as the browser's, to show the study wins); a page outside
a study gets it from ``Accept-Language``; the handler pages Django renders without a request are rendered
under ``translation.override``. ``PENDING`` lists the pages whose templates are not translated yet (their
test is a strict xfail: it fails once they are, to be moved out of the list).

To cover a new worker page: add a function here and its name to ``PAGES``; ``WORKER_TEMPLATES`` makes
the test fail for any template under templates/worker/ or templates/entry/ that no page renders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlencode

from django.test import Client, RequestFactory
from django.test.signals import template_rendered
from django.utils import timezone, translation
from django.views import defaults

from annotation.models import ComprehensionAttempt, Participation, Study
from annotation.web import worker_cookie
from annotation.web.unavailable import unavailable_response
from tasks_app.models import Task
from tests.factories import ConditionFactory, StudyFactory, WorkerFactory, make_classification_task
from tests.worker.conftest import make_participation

State = Participation.State
TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
# The templates a worker can see: every one of them must be rendered by some page below.
WORKER_TEMPLATES = sorted(
    [
        *(f"worker/{p.name}" for p in (TEMPLATES / "worker").glob("*.html")),
        *(f"entry/{p.name}" for p in (TEMPLATES / "entry").glob("*.html")),
        *(f"{code}.html" for code in ("400", "403", "403_csrf", "404", "500", "503")),
        "base.html",
        "home.html",
    ]
)
SHIPPED = ("en", "de", "zh-hans")
TRANSLATED = SHIPPED[1:]  # every language but the default, English


@dataclass
class Rendered:
    html: str
    templates: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # texts that stay as they are in every language (data)


@contextmanager
def recording_templates() -> Iterator[set[str]]:
    names: set[str] = set()

    def record(sender, template, context, **kwargs):
        if template.name:
            names.add(template.name)

    template_rendered.connect(record)
    try:
        yield names
    finally:
        template_rendered.disconnect(record)


def _other(language: str) -> str:
    """A browser language that is not the study's."""
    return "de" if language == "en" else "en"


def _fetch(client: Client, url: str, *, browser: str, method: str = "get", **extra) -> Rendered:
    with recording_templates() as names:
        response = getattr(client, method)(url, HTTP_ACCEPT_LANGUAGE=browser, **extra)
    return Rendered(response.content.decode(), names)


def _task_names(study: Study) -> set[str]:
    codes = {str(code) for code in (study.outcome_codes or {}).values()}
    return {study.name, study.task.name, study.slug, *codes}


# --- Fixtures shared by the pages ----------------------------------------------------------------------


TASK_TEXTS = {}  # language -> Task.translations entry, filled below
TASK_TEXTS["de"] = GERMAN_TASK_TEXTS = {
    "description": "Entscheiden Sie, ob der Satz positiv oder negativ ist.",
    "instructions": "Wählen Sie die passende Kategorie.",
    "labels": {
        "positive": {"definition": "Der Satz ist positiv.", "example": "Ein wunderbarer Film."},
        "negative": {"definition": "Der Satz ist negativ.", "example": "Ein langweiliger Film."},
    },
}
TASK_TEXTS["zh-hans"] = {
    "description": "判断这句话是正面的还是负面的。",
    "instructions": "请选择合适的类别。",
    "labels": {
        "positive": {"definition": "这句话是正面的。", "example": "一部精彩的电影。"},
        "negative": {"definition": "这句话是负面的。", "example": "一部无聊的电影。"},
    },
}


def _task() -> Task:
    """A small classification task whose texts are given in every other language too (Task.translations)."""
    task = make_classification_task(slug=f"t{Task.objects.count()}", n_test=2, n_train=10)
    task.translations = TASK_TEXTS
    task.save(update_fields=["translations"])
    return task


def _study(language: str, **kwargs) -> Study:
    return StudyFactory(task=_task(), language=language, **kwargs)


def _participation(language: str, state: str, **study_kwargs) -> Participation:
    task = _task()
    participation = make_participation(task, state=state, **study_kwargs)
    Study.objects.filter(pk=participation.study_id).update(language=language)
    participation.refresh_from_db()
    return participation


def _worker_page(participation: Participation, language: str) -> Rendered:
    client = Client()
    client.cookies[worker_cookie.COOKIE] = worker_cookie.signed_value(participation.pk)
    rendered = _fetch(client, "/work/", browser=_other(language))
    participation.refresh_from_db()
    rendered.names |= _task_names(participation.study) | {participation.completion_code}
    return rendered


def _join(study: Study, language: str, *, headers: dict | None = None, **params) -> Rendered:
    rendered = _fetch(Client(), f"/join/{study.slug}/", browser=_other(language), data=params, **(headers or {}))
    rendered.names |= _task_names(study)
    return rendered


def _answer(study: Study, language: str, choice: str, **params) -> Rendered:
    """The start page's form posted back to the link: take part (agree, Start) or decline."""
    url = f"/join/{study.slug}/?{urlencode(params)}"
    rendered = _fetch(Client(), url, browser=_other(language), method="post", data={"choice": choice})
    rendered.names |= _task_names(study)
    return rendered


# --- The entry link's pages ------------------------------------------------------------------------------


def entry_closed(language: str) -> Rendered:
    return _join(_study(language, status=Study.Status.CLOSED), language, worker_id="w")


def entry_paused(language: str) -> Rendered:
    return _join(_study(language, status=Study.Status.PAUSED), language, worker_id="w")


def entry_not_started(language: str) -> Rendered:
    return _join(_study(language, status=Study.Status.DRAFT), language, worker_id="w")


def entry_incomplete_link(language: str) -> Rendered:
    return _join(_study(language), language)


def entry_full(language: str) -> Rendered:
    taken = _participation(language, State.TEST, workers_per_condition=1)
    return _answer(taken.study, language, "start", worker_id="newcomer")


def entry_start(language: str) -> Rendered:
    study = _study(language)
    ConditionFactory(study=study)
    return _join(study, language, worker_id="newcomer")


def entry_start_with_consent(language: str) -> Rendered:
    study = _study(language, consent_required=True, consent_text="Wir speichern Ihre Antworten.")
    ConditionFactory(study=study)
    rendered = _join(study, language, worker_id="newcomer")
    rendered.names.add("Wir speichern Ihre Antworten.")  # the researcher's own text
    return rendered


def entry_declined(language: str) -> Rendered:
    study = _study(language, consent_required=True, consent_text="Wir speichern Ihre Antworten.")
    ConditionFactory(study=study)
    return _answer(study, language, "decline", worker_id="newcomer")


def entry_already_took_part(language: str) -> Rendered:
    earlier = _participation(language, State.COMPLETED)
    study = StudyFactory(task=earlier.task, language=language)
    return _join(study, language, worker_id=earlier.worker.external_id)


def entry_slot_released(language: str) -> Rendered:
    gone = _participation(language, State.ABANDONED)
    return _join(gone.study, language, worker_id=gone.worker.external_id)


def entry_blocked(language: str) -> Rendered:
    study = _study(language)
    worker = WorkerFactory(blocked=True)
    return _join(study, language, worker_id=worker.external_id)


def entry_preview(language: str) -> Rendered:
    study = _study(language)
    return _join(study, language, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H")


def entry_open_in_tab(language: str) -> Rendered:
    study = _study(language)
    ConditionFactory(study=study)  # a free slot
    return _join(study, language, headers={"HTTP_SEC_FETCH_DEST": "iframe"}, worker_id="framed")


# --- The worker's pages ----------------------------------------------------------------------------------


def worker_no_session(language: str) -> Rendered:
    return _fetch(Client(), "/work/", browser=language)


def worker_abandoned(language: str) -> Rendered:
    return _worker_page(_participation(language, State.ABANDONED), language)


def worker_closed_before_start(language: str) -> Rendered:
    participation = _participation(language, State.CLAIMED)
    Study.objects.filter(pk=participation.study_id).update(status=Study.Status.CLOSED, closes_at=timezone.now())
    return _worker_page(participation, language)


def worker_closed_after_start(language: str) -> Rendered:
    participation = _participation(language, State.TEST)
    Study.objects.filter(pk=participation.study_id).update(status=Study.Status.CLOSED, closes_at=timezone.now())
    return _worker_page(participation, language)


def worker_start(language: str) -> Rendered:
    return _worker_page(_participation(language, State.CLAIMED), language)


def worker_item(language: str) -> Rendered:
    return _worker_page(_participation(language, State.TEST), language)


def worker_finish(language: str) -> Rendered:
    return _worker_page(_participation(language, State.COMPLETED), language)


def worker_excluded(language: str) -> Rendered:
    return _worker_page(_participation(language, State.EXCLUDED), language)


STUDY_TEXTS = {}  # language -> Study.translations entry
STUDY_TEXTS["de"] = GERMAN_STUDY_TEXTS = {
    "worker_title": "Stimmung von Filmkritiken",
    "consent_text": "Wir speichern Ihre Antworten anonym. Sie können jederzeit aufhören.",
    "survey": {
        "age": {"label": "Wie alt sind Sie?"},
        "native": {"label": "Ist Englisch Ihre Muttersprache?", "options": ["Ja", "Nein"]},
    },
}
STUDY_TEXTS["zh-hans"] = {
    "worker_title": "影评情感",
    "consent_text": "我们以匿名方式保存您的答案。您可以随时停止。",
    "survey": {
        "age": {"label": "您的年龄是？"},
        "native": {"label": "英语是您的母语吗？", "options": ["是", "否"]},
    },
}
SURVEY = [
    {"key": "age", "type": "number", "label": "How old are you?", "required": True, "min": 16, "max": 120},
    {"key": "native", "type": "single", "label": "Is English your first language?", "options": ["Yes", "No"]},
]


def _study_with_texts(participation: Participation, language: str, **fields) -> Participation:
    """The participation's study with a consent text, a survey and their translations (Study.translations)."""
    fields.setdefault("worker_title", "Movie review sentiment")
    Study.objects.filter(pk=participation.study_id).update(translations=STUDY_TEXTS, **fields)
    participation.refresh_from_db()
    return participation


def worker_consent(language: str) -> Rendered:
    participation = _participation(language, State.CLAIMED)
    consent = {"consent_required": True, "consent_text": "We store your answers anonymously. You may stop at any time."}
    return _worker_page(_study_with_texts(participation, language, **consent), language)


def worker_survey(language: str) -> Rendered:
    participation = _participation(language, State.CLAIMED)
    fields = {"survey": SURVEY, "survey_placement": Study.SurveyPlacement.BEFORE_TRAINING}
    return _worker_page(_study_with_texts(participation, language, **fields), language)


# The comprehension check is the researcher's text, written in the study's language (no translations).
COMPREHENSION = {
    "en": [{"key": "what", "label": "What do you choose?", "options": ["A label", "A colour"], "correct": ["A label"]}],
    "de": [
        {
            "key": "what",
            "label": "Was wählen Sie?",
            "options": ["Eine Kategorie", "Eine Farbe"],
            "correct": ["Eine Kategorie"],
        }
    ],
    "zh-hans": [
        {"key": "what", "label": "您要选择什么？", "options": ["一个类别", "一种颜色"], "correct": ["一个类别"]}
    ],
}


def worker_comprehension(language: str) -> Rendered:
    """The check's second attempt: the retry notice and the question marked wrong."""
    participation = _participation(language, State.CLAIMED)
    check = COMPREHENSION.get(language, COMPREHENSION["en"])
    Study.objects.filter(pk=participation.study_id).update(comprehension=check)
    ComprehensionAttempt.objects.create(
        participation=participation, number=1, answers={}, wrong=["what"], passed=False, at=timezone.now()
    )
    participation.refresh_from_db()
    return _worker_page(participation, language)


def worker_declined(language: str) -> Rendered:
    return _worker_page(_participation(language, State.DECLINED), language)


def worker_preview(language: str) -> Rendered:
    participation = _participation(language, State.TEST)
    Participation.all_objects.filter(pk=participation.pk).update(is_preview=True, slot_index=None)
    return _worker_page(participation, language)


def home(language: str) -> Rendered:
    return _fetch(Client(), "/", browser=language)


# --- Error pages -----------------------------------------------------------------------------------------


def error_400(language: str) -> Rendered:
    return _fetch(Client(), "/work/?worker_id=%00", browser=language)


def error_404(language: str) -> Rendered:
    return _fetch(Client(), "/work/no-such-page/", browser=language)


def error_403_csrf(language: str) -> Rendered:
    return _fetch(Client(enforce_csrf_checks=True), "/work/", browser=language, method="post")


def _handler(language: str, render: Callable) -> Rendered:
    request = RequestFactory().get("/work/")
    with translation.override(language), recording_templates() as names:
        response = render(request)
    return Rendered(response.content.decode(), names)


def error_403(language: str) -> Rendered:
    return _handler(language, lambda request: defaults.permission_denied(request, PermissionError()))


def error_500(language: str) -> Rendered:
    return _handler(language, defaults.server_error)


def error_503(language: str) -> Rendered:
    return _handler(language, unavailable_response)


PAGES: dict[str, Callable[[str], Rendered]] = {
    f.__name__: f
    for f in (
        entry_closed,
        entry_paused,
        entry_not_started,
        entry_incomplete_link,
        entry_full,
        entry_start,
        entry_start_with_consent,
        entry_declined,
        entry_already_took_part,
        entry_slot_released,
        entry_blocked,
        entry_preview,
        entry_open_in_tab,
        worker_no_session,
        worker_abandoned,
        worker_closed_before_start,
        worker_closed_after_start,
        worker_start,
        worker_item,
        worker_finish,
        worker_excluded,
        worker_consent,
        worker_survey,
        worker_comprehension,
        worker_declined,
        worker_preview,
        home,
        error_400,
        error_404,
        error_403_csrf,
        error_403,
        error_500,
        error_503,
    )
}

# Pages whose templates are not translated yet: remove a name once its page is (none left).
PENDING: set[str] = set()


# --- Visible text -----------------------------------------------------------------------------------------

# Text nodes that read the same in English and another language: numbers, punctuation, keys, paths and
# codes, names.
SAME_IN_EVERY_LANGUAGE = {
    "Q W E R T",
    "Esc",
    "Prolific",
    "Mechanical Turk",
    "MTurk",
    "CLUES",
    "S1",
    "HIT",
    "UTC",
    "Enter",
    "Neutral",
}
_NEUTRAL = re.compile(r"^[\W\d_]*$|^/\S*$|^[A-Z0-9_]{1,12}$")


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.nodes: list[str] = []
        self.lang: str | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        if tag == "html":
            self.lang = dict(attrs).get("lang")
        for name, value in attrs:
            if name in ("title", "alt", "placeholder", "aria-label") and value and value.strip():
                self.nodes.append(" ".join(value.split()))

    def handle_endtag(self, tag):
        if tag in ("script", "style"):
            self._skip -= 1

    def handle_data(self, data):
        text = " ".join(data.split())
        if text and not self._skip:
            self.nodes.append(text)


def visible_text(html: str) -> tuple[list[str], str | None]:
    """The page's visible text nodes (and the title, alt... attributes), and its <html lang>."""
    parser = _Text()
    parser.feed(html)
    return parser.nodes, parser.lang


def untranslated(english: Rendered, other: Rendered) -> list[str]:
    """Text nodes of the other language's page that are the English page's too, short of names, numbers and
    codes."""
    english_nodes = set(visible_text(english.html)[0])
    names = english.names | other.names
    return [
        node
        for node in visible_text(other.html)[0]
        if node in english_nodes and node not in names and node not in SAME_IN_EVERY_LANGUAGE
        if not _NEUTRAL.match(node)
    ]
