"""Simulated crowd workers: the answer policy and the walk through the protocol over HTTP.

A ``SimulatedWorker`` does what the worker pages' JavaScript does: open the
entry link, load the pages (and, once per browser, their static files), start,
then GET the current item and POST each answer: a test answer's response
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
from pathlib import Path

from bench.client import Browser, Recorder

FOLDERS = {  # task slug -> release folder
    "sst2": "SST-2",
    "mnli": "MNLI",
    "conll03": "CoNLL2003",
    "wikiann": "WikiANN_EN",
    "squad2": "SQuAD-v2",
    "record": "ReCoRD",
}
STATIC_URL = re.compile(r'(?:src|href)="(/static/[^"]+)"')
WORD = re.compile(r"\w+")

Key = tuple[str, str]


def item_key(context, question: str) -> Key:
    return json.dumps(context, ensure_ascii=False), question


def _gold_strings(answer) -> frozenset[str]:
    texts = []
    for value in answer or []:
        text = value.get("text", "") if isinstance(value, dict) else value
        if text:
            texts.append(text)
    return frozenset(texts)


def read_gold(release: Path, *, task: str, split: int = 1) -> dict[Key, frozenset[str]]:
    """(context, question) -> gold answer set, from the release's test file and the split's training files."""
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
        words = [m.span() for m in WORD.finditer(context) if context[m.start() : m.end()] not in gold]
        if gold and (not words or self.rng.random() < 0.3):
            return []  # a wrong "no answer"
        if not words:
            return []
        located = [context.find(t) for t in gold if context.find(t) >= 0]
        if located:  # shift off the gold: the first word after (or before) the first gold span
            after = [w for w in words if w[0] > min(located)]
            return [after[0] if after else words[-1]]
        return [self.rng.choice(words)]


@dataclass
class Outcome:
    worker_id: str
    study: str
    kind: str  # the role: normal, fails_training, abandons
    state: str = ""  # the state the server reported last: completed, excluded, abandoning, refused
    refused: int = 0  # entry refusal status, if any
    test: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)  # item -> (answer, gold)
    training: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    unknown_gold: int = 0
    errors: list[str] = field(default_factory=list)


class ProtocolError(Exception):
    pass


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
    ):
        self.browser = Browser(port, recorder)
        self.study = study
        self.outcome = Outcome(worker_id=worker_id, study=study, kind=kind)
        self.gold = gold
        self.rng = rng
        # a worker who fails the training filter answers training items wrong on purpose
        self.training_policy = Policy(rng, p_gold=0.0 if kind == "fails_training" else p_gold)
        self.test_policy = Policy(rng, p_gold=p_gold, p_skip=p_skip)
        self.p_reload = p_reload
        self.abandon_after = abandon_after if kind == "abandons" else None
        self.requests_left = max_requests
        self.static_seen: set[str] = set()

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
        for url in STATIC_URL.findall(html):
            if url not in self.static_seen:
                self.static_seen.add(url)
                self._budget()
                static = await self.browser.request("static", "GET", url, accept="*/*")
                if static.status != 200:
                    raise ProtocolError(f"{url} answered {static.status}")
        return html

    async def _api(self, kind: str, method: str, path: str, body: dict | None = None, ok=(200,)) -> dict:
        self._budget()
        reply = await self.browser.api(kind, method, path, body)
        if reply.status not in ok:
            raise ProtocolError(f"{method} {path} answered {reply.status}: {reply.body[:300]!r}")
        return reply.json()

    async def run(self) -> Outcome:
        try:
            await self._run()
        except ProtocolError as exc:
            self.outcome.errors.append(str(exc))
        finally:
            self.browser.close()
        return self.outcome

    async def _run(self) -> None:
        self._budget()
        link = f"/join/{self.study}/?worker_id={self.outcome.worker_id}"
        await self.browser.request("entry", "GET", link)  # the start page: nothing held yet
        reply = await self.browser.request("entry", "POST", link, form={"choice": "start"})  # takes the slot
        if reply.status != 302:
            self.outcome.state, self.outcome.refused = "refused", reply.status
            return
        html = await self._page()
        if "data-api=" not in html:
            raise ProtocolError("the first page is not the start page")
        await self._api("start", "POST", "/api/session/start/", {})
        answered = 0
        while True:
            html = await self._page()
            if 'id="item-main"' not in html and "data-current=" not in html:
                break  # finish, excluded or abandoned page
            session = await self._api("item", "GET", "/api/session/current/")
            labels = [label["name"] for label in session["task"]["labels"]]
            while session["item"] is not None and session["state"] in ("training", "test"):
                item = session["item"]
                if self.abandon_after is not None and answered >= self.abandon_after:
                    self.outcome.state = "abandoning"
                    return  # closes the tab: the slot is released later by the Celery task
                following = await self._answer(item, labels)
                answered += 1
                if self.outcome.state != item["phase"]:
                    break  # the step is over: the browser navigates to /work/
                if following is not None:  # a test answer's response carries the next item, as the page uses it
                    session = {**session, **following, "state": self.outcome.state}
                else:  # after a training reveal, "Next" asks for the current item
                    session = await self._api("item", "GET", "/api/session/current/")
            if self.outcome.state not in ("training", "test"):
                html = await self._page()
                break
        if self.outcome.state == "completed" and 'id="completion-code"' not in html:
            raise ProtocolError("the finish page shows no completion code")

    async def _answer(self, item: dict, labels: list[str]) -> dict | None:
        """Answer the item; return the next item the response carries (test step), if any."""
        key = item_key(item["context"], item["question"])
        gold = self.gold.get(key)
        if gold is None:
            self.outcome.unknown_gold += 1
            gold = frozenset()
        policy = self.training_policy if item["phase"] == "training" else self.test_policy
        answer = policy.answer(item, labels, gold)
        confidence = self.rng.randint(1, 5)
        if answer.skipped:
            body = await self._api(
                "skip", "POST", "/api/session/skip/", {"item": item["item"], "confidence": confidence}
            )
        else:
            payload = {"item": item["item"], "confidence": confidence, **answer.body}
            body = await self._api("submit", "POST", "/api/session/submit/", payload)
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
