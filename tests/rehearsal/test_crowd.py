"""The simulated crowd's reading of pages and items (the whole walk is in test_rehearse_study)."""

import asyncio
import json
import random
from concurrent.futures import ThreadPoolExecutor

from annotation.rehearsal.client import Recorder, Reply
from annotation.rehearsal.crowd import SimulatedWorker, form_fields, read_instruction

START_PAGE = """<main>
<form method="post" action="/join/s/?PROLIFIC_PID=p1&amp;STUDY_ID=S" class="consent-form" id="entry-form">
<input type="hidden" name="text_hash" value="abc123">
<button type="submit" name="choice" value="agree">I agree</button>
<button type="submit" name="choice" value="decline">I do not agree</button></form></main>"""


def test_the_start_page_form_gives_its_action_hidden_fields_and_choices():
    action, hidden, choices = form_fields(START_PAGE, "entry-form")
    assert action == "/join/s/?PROLIFIC_PID=p1&STUDY_ID=S"
    assert hidden == {"text_hash": "abc123"} and choices == ["agree", "decline"]
    assert form_fields(START_PAGE, "survey-form") is None


def _item(question, context, kind="label"):
    return {"question": question, "context": context, "answer_kind": kind}


def test_an_attention_check_is_answered_from_what_it_asks():
    label = read_instruction(_item("To show you are reading, choose 'negative'.", "A check."), ["positive", "negative"])
    assert label is not None and label.body == {"label": "negative"}
    span = read_instruction(
        _item("Select the word 'river' (and nothing else).", "We walked by the river.", "spans"), []
    )
    assert span is not None and span.body["spans"] == [{"start": 17, "end": 22, "text": "river"}]


def test_a_german_check_is_read_by_its_button_text():
    item = _item("Zum Zeichen, dass Sie aufmerksam lesen, wählen Sie „folgt daraus“.", "Mit dieser Aufgabe ...")
    shown = {"folgt daraus": "entailment", "weder noch": "neutral", "Widerspruch": "contradiction"}
    label = read_instruction(item, ["entailment", "neutral", "contradiction"], shown)
    assert label is not None and label.body == {"label": "entailment"}
    span = read_instruction(_item("请在这句话中选出词语“橙子”。", "橙子放在桌子上。", "spans"), [])
    assert span is not None and span.body["spans"] == [{"start": 0, "end": 2, "text": "橙子"}]


def test_a_check_whose_instruction_is_not_shown_cannot_be_read():
    shown = _item("What is the relationship between these sentences?", ["This item checks reading.", "Fine."])
    assert read_instruction(shown, ["entailment", "neutral", "contradiction"]) is None


class _Browser:
    """A browser whose server excludes the worker while they answer their first test item."""

    def __init__(self):
        self.excluded = False
        self.sent: list[tuple[str, str]] = []

    async def request(self, kind, method, path, body=None, accept="text/html", form=None):
        self.sent.append((method, path))
        if kind == "entry":
            return Reply(302, {"location": "/work/"}, b"")
        if self.excluded:
            return Reply(200, {}, b'<main class="page-excluded"><code id="completion-code">SCREENED</code></main>')
        return Reply(200, {}, b'<main id="item-main" data-current="1"></main>')

    async def api(self, kind, method, path, body=None):
        self.sent.append((method, path))
        if method == "GET":
            item = {"item": 1, "phase": "test", "context": "Fine.", "question": "Sentiment?", "answer_kind": "label"}
            session = {"state": "test", "item": item, "task": {"labels": [{"name": "positive"}]}}
            return Reply(200, {}, json.dumps(session).encode())
        self.excluded = True  # the group's verdict lands before this answer does
        return Reply(409, {}, json.dumps({"error": "not_in_step", "detail": "There is no step."}).encode())

    def close(self):
        pass


def test_a_worker_excluded_mid_test_reads_the_end_page_instead_of_failing():
    browser = _Browser()
    worker = SimulatedWorker(
        port=0, recorder=Recorder(), study="s", worker_id="w1", kind="normal", gold={}, rng=random.Random(1),
        p_gold=1.0, p_skip=0.0, p_reload=0.0, abandon_after=0, max_requests=50, load_static=False,
        browser=browser, entry_path="/preview/x/",
    )  # fmt: skip
    with ThreadPoolExecutor(max_workers=1) as pool:  # a thread of its own: the browser tests leave a loop running
        outcome = pool.submit(asyncio.run, worker.run()).result()
    assert outcome.errors == []
    assert outcome.state == "left_step" and outcome.code == "SCREENED"
    assert outcome.test == {}  # the refused answer is not counted as given
    assert browser.sent[-1] == ("GET", "/work/")


def test_a_wrong_span_is_wrong_as_the_scorer_sees_it():
    """The training failer answers every item wrong: a word inside a gold answer, or one that normalises to a
    gold answer ("the Normans" is "normans"), would score."""
    from annotation.rehearsal.crowd import Policy
    from tasks_app.scoring import s1_best_of

    cases = [
        ("It was the Normans who came in the 10th century.", frozenset({"the Normans"})),
        ("It was the Normans who came in the 10th century.", frozenset({"The Normans", "Normans"})),
        ("It was the Normans who came in the 10th century.", frozenset({"the 10th century", "10th"})),
        ("Paris, the capital, is in France.", frozenset({"Paris", "France"})),
    ]
    for seed in range(40):
        policy = Policy(random.Random(seed), p_gold=0.0)
        for context, gold in cases:
            item = {"phase": "training", "answer_kind": "spans", "context": context, "multiple_spans": False}
            answer = policy.answer(item, [], gold)
            assert s1_best_of(answer.strings, [[g] for g in gold], normalize=True) == 0.0, (seed, context, answer)
