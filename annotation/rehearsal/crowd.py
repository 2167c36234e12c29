"""Simulated crowd workers: the answer policy and the walk through the protocol over HTTP.

Used by the rehearsal (annotation.rehearsal.runner) and the replay benchmark
(bench/replay.py). A ``SimulatedWorker`` does what a person with a browser
does: open the entry link and send its start page's form (``join``), load the
pages (and, once per browser, their static files), answer the consent and
survey forms /work/ shows, start, then GET the current item and POST each
answer: a test answer's response
carries the next item, a training answer's carries the reveal, after which
"Next" GETs the current item (some workers reload a revealed item, which GETs
the item and its reveal); finally load the finish page. Answers come from
``Policy``: the gold answer (read from the release files, never from the app)
with probability ``p_gold``, otherwise a wrong label, a shifted span or a
wrong "no answer"; spans are sent with valid Python offsets.

Every answer given is recorded so that the harness can compute each
annotator's expected S1 independently of the app.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path
from typing import Any

from annotation.rehearsal.client import Browser, Recorder, Reply
from tasks_app.scoring import normalize_answer

FOLDERS = {  # task slug -> release folder
    "sst2": "SST-2",
    "mnli": "MNLI",
    "conll03": "CoNLL2003",
    "wikiann": "WikiANN_EN",
    "squad2": "SQuAD-v2",
    "record": "ReCoRD",
}
FORM = re.compile(r"<form\b[^>]*>.*?</form>", re.S)
HIDDEN = re.compile(r'<input type="hidden" name="([^"]+)" value="([^"]*)"')
CHOICES = re.compile(r'name="choice" value="(\w+)"')
ACTION = re.compile(r'action="([^"]*)"')
CODE = re.compile(r'id="completion-code">([^<]*)<')
LINK = re.compile(r'id="completion-link" href="([^"]*)"')
QUOTED = re.compile(r"['\"‘“„]([^'\"‘’“”„]+)['\"’”“]")  # German quotes „…“ too
STATIC_URL = re.compile(r'(?:src|href)="(/static/[^"]+)"')
WORD = re.compile(r"\w+")

Key = tuple[str, str, str, str]


def item_key(context: Any, question: str, marks: Any = (), options: Any = ()) -> Key:
    """An item as the worker page shows it: its context, question, marked spans and own options. Items that
    share a text but mark other spans (CLUEWSC) or offer other options are other items with their own gold."""
    spans = sorted((m.get("start"), m.get("end"), str(m.get("role", ""))) for m in marks or ())
    texts = [o.get("text", "") if isinstance(o, dict) else str(o) for o in options or ()]
    return (
        json.dumps(context, ensure_ascii=False),
        question,
        json.dumps(spans, ensure_ascii=False),
        json.dumps(texts, ensure_ascii=False),
    )


def shown_key(item: dict) -> Key:
    """The key of an item of the session API (``item_payload``), as the page shows it."""
    return item_key(item["context"], item["question"], item.get("marks"), item.get("options"))


def _gold_strings(answer: Any) -> frozenset[str]:
    texts = []
    for value in answer or []:
        text = value.get("text", "") if isinstance(value, dict) else value
        if text:
            texts.append(text)
    return frozenset(texts)


def read_gold(release: Path, *, task: str, split: int = 1) -> dict[Key, frozenset[str]]:
    """item -> gold answer set (``item_key``), from the release's test file and the split's training files."""
    gold: dict[Key, frozenset[str]] = {}
    folder = release / FOLDERS[task]
    files = [p for p in sorted(folder.glob("*.jsonl")) if p.stem.endswith("_test") or p.stem.endswith(f"_{split}")]
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    gold.setdefault(item_key(row["context"], row["question"]), _gold_strings(row.get("answer")))
    return gold


@dataclass
class Answer:
    body: dict  # what is POSTed (without item and confidence)
    strings: frozenset[str]  # the answer set it stands for
    skipped: bool = False


class Policy:
    """Gold with probability ``p_gold``, else a plausible mistake; a few test items skipped."""

    def __init__(self, rng: random.Random, *, p_gold: float, p_skip: float = 0.0):
        self.rng = rng
        self.p_gold = p_gold
        self.p_skip = p_skip

    def answer(self, item: dict, labels: list[str], gold: frozenset[str]) -> Answer:
        if item["phase"] == "test" and self.rng.random() < self.p_skip:
            return Answer({}, frozenset(), skipped=True)
        right = self.rng.random() < self.p_gold
        if item["answer_kind"] == "label":
            if right and len(gold) == 1 and next(iter(gold)) in labels:
                label = next(iter(gold))
            else:
                label = self.rng.choice([x for x in labels if x not in gold] or labels)
            return Answer({"label": label}, frozenset([label]))
        context = item["context"]
        spans = self._gold_spans(context, gold, item["multiple_spans"]) if right else self._wrong_spans(context, gold)
        if not spans and not item.get("empty_answer_allowed", True):
            # The page offers no "No answer" (ReCoRD): a wrong guess is a wrong word, and with none, a skip.
            words = [m.span() for m in WORD.finditer(context) if context[m.start() : m.end()] not in gold]
            if not words:
                return Answer({}, frozenset(), skipped=True)
            spans = [self.rng.choice(words)]
        if not spans:
            return Answer({"no_answer": True}, frozenset())
        body = {"spans": [{"start": s, "end": e, "text": context[s:e]} for s, e in spans]}
        return Answer(body, frozenset(context[s:e] for s, e in spans))

    @staticmethod
    def _gold_spans(context: str, gold: frozenset[str], multiple: bool) -> list[tuple[int, int]]:
        spans = []
        for text in sorted(gold):
            start = context.find(text)
            if start >= 0 and text.strip():
                spans.append((start, start + len(text)))
        spans = sorted(set(spans))
        return spans if multiple else spans[:1]

    def _wrong_spans(self, context: str, gold: frozenset[str]) -> list[tuple[int, int]]:
        # Wrong as the scorer sees it: no word inside a gold answer's text, nor one that the SQuAD-style
        # normalisation (case, articles, punctuation) turns into a gold answer ("the 10th" is "10th").
        inside = [(at, at + len(text)) for text in gold if text for at in _occurrences(context, text)]
        golds = {normalize_answer(text) for text in gold}
        words = [
            (start, end)
            for start, end in (m.span() for m in WORD.finditer(context))
            if normalize_answer(context[start:end]) not in golds and not any(a < end and start < b for a, b in inside)
        ]
        if gold and (not words or self.rng.random() < 0.3):
            return []  # a wrong "no answer"
        if not words:
            return []
        located = [context.find(t) for t in gold if context.find(t) >= 0]
        if located:  # shift off the gold: the first word after (or before) the first gold span
            after = [w for w in words if w[0] > min(located)]
            return [after[0] if after else words[-1]]
        return [self.rng.choice(words)]


def _occurrences(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at >= 0:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def read_instruction(item: dict, labels: list[str], shown: dict[str, str] | None = None) -> Answer | None:
    """What an attentive person answers to an attention check: the label or words its text asks for
    ("choose 'negative'", "select the word 'river'"); None if the item states no answer they can find.
    ``shown``: the labels' button texts (text -> label), as a check in the study's language names them."""
    context = item["context"]
    texts = [item["question"], *(context if isinstance(context, list) else [context])]
    quoted = [q for text in texts for q in QUOTED.findall(text)]
    if item["answer_kind"] == "label":
        named = [(shown or {}).get(q, q) for q in quoted]
        label = next((q for q in named if q in labels), None)
        return Answer({"label": label}, frozenset([label])) if label else None
    if not isinstance(context, str):
        return None
    for word in quoted:
        start = context.find(word)
        if start >= 0:
            return Answer({"spans": [{"start": start, "end": start + len(word), "text": word}]}, frozenset([word]))
    return None


@dataclass
class Outcome:
    worker_id: str
    study: str
    kind: str  # the role: normal, fails_training, abandons (bench); the rehearsal's behaviours
    # the state the server reported last: completed, excluded, abandoning, refused, declined; left_step
    # when a verdict ended the step while the worker was answering (the end page then gives the code)
    state: str = ""
    refused: int = 0  # entry refusal status, if any
    test: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)  # item -> (answer, gold)
    training: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    checks: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)  # attention checks
    unknown_gold: int = 0
    errors: list[str] = field(default_factory=list)
    code: str = ""  # the completion code the last page showed
    link: str = ""  # where that page sends the worker back to
    page: str = ""  # the last page's text, for refusals


class ProtocolError(Exception):
    pass


def form_fields(html: str, form_id: str) -> tuple[str, dict[str, str], list[str]] | None:
    """(action, hidden fields, choice buttons) of the page's form ``form_id``, or None if the page has none."""
    for form in FORM.findall(html):
        if f'id="{form_id}"' in form or f'class="{form_id}"' in form:
            action = ACTION.search(form)
            hidden = {name: unescape(value) for name, value in HIDDEN.findall(form)}
            return unescape(action.group(1)) if action else "", hidden, CHOICES.findall(form)
    return None


async def join(browser: Browser, path: str, *, agree: bool = True) -> Reply:
    """Take part as a person does: GET the entry link, then send its start page's form back to the same link
    (``choice=agree`` with the consent text's ``text_hash``, ``decline``, or ``start`` without consent).
    A 302 is an admission (to /work/); anything else is the page that says why not. An entry link that
    admits on GET (no start page) is followed as it is."""
    reply = await browser.request("entry", "GET", path)
    if reply.status != 200:
        return reply
    form = form_fields(reply.body.decode(), "entry-form")
    if form is None:
        return reply  # a message page (closed, full, already took part ...)
    action, hidden, choices = form
    choice = "start" if "start" in choices else "agree" if agree else "decline"
    return await browser.request("entry", "POST", action or path, form={**hidden, "choice": choice})


async def staff_login(browser: Browser, *, username: str, password: str) -> None:
    """Sign in through the admin's login form, as a researcher does before a preview."""
    page = await browser.request("login", "GET", "/admin/login/")
    form = form_fields(page.body.decode(), "login-form")
    if form is None:
        raise ProtocolError(f"/admin/login/ shows no login form ({page.status})")
    action, hidden, _ = form
    fields = {**hidden, "username": username, "password": password, "next": "/admin/"}
    reply = await browser.request("login", "POST", action or "/admin/login/", form=fields)
    if reply.status != 302:
        raise ProtocolError(f"the staff login answered {reply.status}")


class SimulatedWorker:
    def __init__(
        self,
        *,
        port: int,
        recorder: Recorder,
        study: str,
        worker_id: str,
        kind: str,
        gold: dict[Key, frozenset[str]],
        rng: random.Random,
        p_gold: float,
        p_skip: float,
        p_reload: float,
        abandon_after: int,
        max_requests: int,
        query: str = "",
        agree: bool = True,
        survey: dict[str, object] | None = None,
        comprehension: dict[str, object] | None = None,
        checks: frozenset[Key] = frozenset(),
        fail_checks: bool = False,
        load_static: bool = True,
        browser: Browser | None = None,
        entry_path: str = "",
    ):
        self.browser = browser or Browser(port, recorder)
        self.study = study
        self.query = query or f"worker_id={worker_id}"
        self.outcome = Outcome(worker_id=worker_id, study=study, kind=kind)
        self.gold = gold
        self.rng = rng
        # a worker who fails the training filter answers training items wrong on purpose
        self.training_policy = Policy(rng, p_gold=0.0 if kind == "fails_training" else p_gold)
        self.test_policy = Policy(rng, p_gold=p_gold, p_skip=p_skip)
        self.check_policy = Policy(rng, p_gold=0.0)  # a wrong answer to a check (or a guess at an unreadable one)
        self.checks = checks  # the attention checks' items, known from the design
        self.shown: dict[str, str] = {}  # the labels' button texts (text -> label), read from the session
        self.fails_checks = fail_checks
        self.p_reload = p_reload
        self.abandon_after = abandon_after if kind == "abandons" else None
        self.requests_left = max_requests
        self.static_seen: set[str] = set()
        self.agree = agree
        self.survey = survey or {}
        self.comprehension = comprehension or {}
        self.load_static = load_static
        self.entry_path = entry_path

    def _budget(self) -> None:
        self.requests_left -= 1
        if self.requests_left < 0:
            raise ProtocolError("request budget exhausted (a loop that does not end?)")

    async def _page(self) -> str:
        """Load /work/ as a navigation, then its static files once per browser."""
        self._budget()
        reply = await self.browser.request("page", "GET", "/work/")
        if reply.status not in (200, 410):
            raise ProtocolError(f"/work/ answered {reply.status}")
        html = reply.body.decode()
        for url in STATIC_URL.findall(html) if self.load_static else ():
            if url not in self.static_seen:
                self.static_seen.add(url)
                self._budget()
                static = await self.browser.request("static", "GET", url, accept="*/*")
                if static.status != 200:
                    raise ProtocolError(f"{url} answered {static.status}")
        return html

    async def _api(
        self, kind: str, method: str, path: str, body: dict | None = None, ok: tuple[int, ...] = (200,)
    ) -> dict:
        self._budget()
        reply = await self.browser.api(kind, method, path, body)
        if reply.status not in ok:
            raise ProtocolError(f"{method} {path} answered {reply.status}: {reply.body[:300]!r}")
        return reply.json()

    async def _form(self, kind: str, action: str, fields: dict) -> None:
        self._budget()
        reply = await self.browser.request(kind, "POST", action, form=fields)
        if reply.status not in (200, 302):
            raise ProtocolError(f"POST {action} answered {reply.status}: {reply.body[:300]!r}")

    async def run(self) -> Outcome:
        try:
            await self._run()
        except ProtocolError as exc:
            self.outcome.errors.append(str(exc))
        finally:
            self.browser.close()
        return self.outcome

    def _read_end_page(self, html: str) -> None:
        code, link = CODE.search(html), LINK.search(html)
        self.outcome.code = unescape(code.group(1)).strip() if code else ""
        self.outcome.link = unescape(link.group(1)) if link else ""

    async def _run(self) -> None:
        self._budget()
        if self.entry_path:  # e.g. a staff preview's link, for a browser signed in as staff
            reply = await self.browser.request("entry", "GET", self.entry_path)
        else:
            reply = await join(self.browser, f"/join/{self.study}/?{self.query}", agree=self.agree)
        if reply.status != 302:
            self.outcome.state, self.outcome.refused = "refused", reply.status
            self.outcome.page = reply.body.decode(errors="replace")
            if reply.status == 200 and not self.agree and 'id="entry-form"' not in self.outcome.page:
                self.outcome.state = "declined"  # the entry link's answer to "I do not agree"
            self._read_end_page(self.outcome.page)
            return
        answered = 0
        for _ in range(20):  # consent, survey, start, training, test, survey, finish: a handful of pages
            html = await self._page()
            consent = form_fields(html, "consent-form")
            survey = form_fields(html, "survey-form")
            check = form_fields(html, "comprehension-form")
            if check is not None:  # the comprehension check, answered as a careful worker does
                action, hidden, _ = check
                await self._form("comprehension", action, {**hidden, **self.comprehension})
            elif consent is not None:  # consent asked on /work/ (an entry link that admits on GET)
                action, hidden, _ = consent
                await self._form("consent", action, {**hidden, "choice": "agree" if self.agree else "decline"})
            elif survey is not None:
                action, hidden, _ = survey
                await self._form("survey", action, {**hidden, **self.survey})
            elif 'id="item-main"' in html or "data-current=" in html:
                if await self._items(answered_before=answered):
                    return  # left mid-test
                answered = len(self.outcome.training) + len(self.outcome.test) + len(self.outcome.checks)
            elif "data-api=" in html:
                await self._api("start", "POST", "/api/session/start/", {})
            else:  # finish, excluded, declined, closed or abandoned page
                self._read_end_page(html)
                if "page-declined" in html:
                    self.outcome.state = "declined"
                break
        else:
            raise ProtocolError("the pages never came to an end")
        if self.outcome.state == "completed" and 'id="completion-code"' not in html:
            raise ProtocolError("the finish page shows no completion code")

    async def _items(self, *, answered_before: int) -> bool:
        """Answer the current step's items; True if the worker left (closed the tab) on the way."""
        session = await self._api("item", "GET", "/api/session/current/")
        labels = [label["name"] for label in session["task"]["labels"]]
        self.shown = {label.get("text") or label["name"]: label["name"] for label in session["task"]["labels"]}
        self.outcome.state = session["state"]
        answered = answered_before
        while session["item"] is not None and session["state"] in ("training", "test"):
            item = session["item"]
            if self.abandon_after is not None and answered >= self.abandon_after:
                self.outcome.state = "abandoning"
                return True  # closes the tab: the slot is released later by the abandonment sweep
            following = await self._answer(item, labels)
            answered += 1
            if self.outcome.state != item["phase"]:
                break  # the step is over: the browser navigates to /work/
            if following is not None:  # a test answer's response carries the next item, as the page uses it
                session = {**session, **following, "state": self.outcome.state}
            else:  # after a training reveal, "Next" asks for the current item
                session = await self._api("item", "GET", "/api/session/current/")
        return False

    async def _answer(self, item: dict, labels: list[str]) -> dict | None:
        """Answer the item; return the next item the response carries (test step), if any."""
        key = shown_key(item)
        gold = self.gold.get(key)
        if gold is None:
            self.outcome.unknown_gold += 1
            gold = frozenset()
        if key in self.checks:
            # Read the check as a person does; one who fails them answers anything but what it asks.
            read = read_instruction(item, labels, self.shown)
            stated = read.strings if read is not None else frozenset()
            answer = (
                read if read is not None and not self.fails_checks else self.check_policy.answer(item, labels, stated)
            )
        else:
            policy = self.training_policy if item["phase"] == "training" else self.test_policy
            answer = policy.answer(item, labels, gold)
        confidence = self.rng.randint(1, 5)
        if answer.skipped:
            kind, path, payload = "skip", "/api/session/skip/", {"item": item["item"], "confidence": confidence}
        else:
            kind, path = "submit", "/api/session/submit/"
            payload = {"item": item["item"], "confidence": confidence, **answer.body}
        body = await self._api(kind, "POST", path, payload, ok=(200, 409))
        if body.get("error") == "not_in_step":
            # A verdict (the group's training filter, an admin) ended the step while the worker
            # was on this item: the answer is refused, and the page, reloaded, shows the end page.
            self.outcome.state = "left_step"
            return None
        if "error" in body:
            raise ProtocolError(f"POST {path} answered 409: {body}")
        if key in self.checks:
            record = self.outcome.checks
        else:
            record = self.outcome.training if item["phase"] == "training" else self.outcome.test
        record[item["item"]] = (answer.strings, gold)
        self.outcome.state = body["state"]
        if item["phase"] == "training":
            if "reveal" not in body:
                raise ProtocolError("a training submit came back without the reveal")
            if self.rng.random() < self.p_reload:  # reload on the revealed item: item, then its reveal
                await self._api("item", "GET", f"/api/session/items/{item['item']}/")
                await self._api("reveal", "GET", f"/api/session/items/{item['item']}/reveal/")
        elif "reveal" in body or "gold" in body or "score" in body["answer"]:
            raise ProtocolError("a test submit response carries gold or a score")
        return body.get("next")
