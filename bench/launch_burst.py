"""Launch burst: many participants open the entry link within seconds of a launch, most of them consent.

    .venv/bin/python bench/launch_burst.py --db sqlite      # the embedded default: one gunicorn process
    .venv/bin/python bench/launch_burst.py --db postgres    # the production stack (bench/stack.py)
    .venv/bin/python bench/launch_burst.py --arrivals 300 --window 10 --consenting 200 --slots 100

A crowd platform sends a study's link to whoever is online, so most of a study's participants arrive
in its first minutes. This benchmark starts the server as bench/openloop.py does, makes an open
0-shot study with a consent text and ``--slots`` slots, and replays a launch: ``--arrivals``
participants open the entry link (``GET /join/<slug>/?worker_id=...``) at intended times drawn
uniformly over ``--window`` seconds (open loop: fixed in advance with a seed, whatever the server
does); ``--consenting`` of them, drawn at random, agree to the consent text (``POST`` the start
page's form) a think time after arriving; the ones admitted load the session, start, and submit
their first item a think time later. Every latency runs from the request's INTENDED send time to
the last byte of the reply, so a server that falls behind is charged for the wait.

The JSON reports p50/p95/p99 of the join (GET), the consent POST and the first submit, the HTTP
statuses of every request (``server_errors``: the 5xx count), the slots the database holds at the
end against the design's, and how many consenting participants were told the study is full with
the study's ``full`` code. ``ok`` is true when there was no 5xx, exactly the design's slots were
taken and every other consenting participant got the full code. The run is bounded by
``--timeout`` seconds; at the defaults it takes about a minute after the server is up.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from annotation.rehearsal.client import Browser, Recorder  # noqa: E402
from bench.openloop import (  # noqa: E402
    add_server_options,
    create_study,
    host,
    make_server,
    parse_server_options,
    run_on_server,
    span_of,
)
from bench.stats import latency_summary  # noqa: E402

CONSENT_TEXT = "You will label a few sentences. Your answers are kept without your name."
TEXT_HASH = re.compile(rb'name="text_hash" value="([0-9a-f]{64})"')


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_server_options(parser, db="sqlite")
    parser.add_argument("--arrivals", type=int, default=300, help="participants who open the link")
    parser.add_argument("--window", type=float, default=10.0, help="seconds over which they arrive")
    parser.add_argument("--consenting", type=int, default=200, help="of them, how many agree to the consent text")
    parser.add_argument("--slots", type=int, default=100, help="the design's slots (one 0-shot condition)")
    parser.add_argument("--think", type=float, default=2.0, help="mean think time before consenting and submitting")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=600.0, help="the whole run's limit in seconds")
    parser.add_argument("--output", type=Path, default=None, help="also write the JSON to this file")
    args = parse_server_options(parser, argv)
    if not 1 <= args.arrivals <= 2000 or not 0 <= args.consenting <= args.arrivals or args.slots < 1:
        parser.error("--arrivals must be 1..2000, --consenting 0..arrivals and --slots >= 1")
    if args.window <= 0 or args.think < 0:
        parser.error("--window must be > 0 and --think >= 0")
    return args


def prepare_study(server, slots: int) -> tuple[str, str]:
    """An open 0-shot study with a consent text and ``slots`` slots; its slug and its ``full`` code."""
    from django.db import connections

    from annotation.models import Study
    from annotation.protocol.outcomes import Outcome
    from annotation.services.state import outcomes

    # create_study gives ``sessions + 10`` slots: ask for ten fewer.
    slug = create_study(server, items=20, sessions=slots - 10)
    Study.objects.filter(slug=slug).update(consent_required=True, consent_text=CONSENT_TEXT)
    code, _ = outcomes.code_for(Study.objects.get(slug=slug), Outcome.FULL)
    connections.close_all()
    return slug, code


def slots_held(slug: str) -> int:
    from django.db import connections

    from annotation.models import Participation

    held = Participation.objects.filter(study__slug=slug, state__in=Participation.HOLDING_STATES).count()
    connections.close_all()
    return held


@dataclass
class Burst:
    latencies: dict[str, list[float]] = field(default_factory=lambda: {"join": [], "consent": [], "first_submit": []})
    admitted: int = 0
    told_full: int = 0
    other: dict[str, int] = field(default_factory=dict)  # replies that were neither admitted nor full
    recorder: Recorder = field(default_factory=Recorder)  # every request's status

    def note(self, what: str) -> None:
        self.other[what] = self.other.get(what, 0) + 1


async def participant(
    port: int, slug: str, number: int, at: float, think: tuple[float, float] | None, full_code: str, burst: Burst
) -> None:
    """One participant: opens the link at ``at``; with ``think``, consents and submits a first item."""
    loop = asyncio.get_running_loop()
    browser = Browser(port, burst.recorder)
    link = f"/join/{slug}/?worker_id=launch-{number:05d}"
    try:
        await asyncio.sleep(max(0.0, at - loop.time()))
        reply = await browser.request("join", "GET", link)
        burst.latencies["join"].append((loop.time() - at) * 1000)
        if think is None:
            return
        match = TEXT_HASH.search(reply.body)
        if reply.status != 200 or match is None:
            burst.note(f"join {reply.status}")
            return
        intended = at + think[0]
        await asyncio.sleep(max(0.0, intended - loop.time()))
        form = {"choice": "agree", "text_hash": match.group(1).decode()}
        reply = await browser.request("consent", "POST", link, form=form)
        burst.latencies["consent"].append((loop.time() - intended) * 1000)
        if reply.status == 409 and full_code.encode() in reply.body:
            burst.told_full += 1
            return
        if reply.status != 302:
            burst.note(f"consent {reply.status}")
            return
        burst.admitted += 1
        await browser.api("session", "GET", "/api/session/current/")
        reply = await browser.api("session", "POST", "/api/session/start/", {})
        if reply.status != 200:
            burst.note(f"start {reply.status}")
            return
        item = reply.json()["item"]
        intended = loop.time() + think[1]
        await asyncio.sleep(max(0.0, intended - loop.time()))
        body = {"item": item["item"], "spans": [span_of(item)], "confidence": 4}
        reply = await browser.api("first_submit", "POST", "/api/session/submit/", body)
        burst.latencies["first_submit"].append((loop.time() - intended) * 1000)
        if reply.status != 200:
            burst.note(f"submit {reply.status}")
    except (OSError, asyncio.IncompleteReadError, ValueError, KeyError) as exc:
        burst.note(f"error {type(exc).__name__}")
    finally:
        browser.close()


async def measure(server, args: argparse.Namespace) -> dict:
    slug, full_code = await asyncio.to_thread(prepare_study, server, args.slots)
    rng = random.Random(args.seed)
    offsets = sorted(rng.uniform(0, args.window) for _ in range(args.arrivals))
    consenting = set(rng.sample(range(args.arrivals), args.consenting))
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.2
    burst = Burst()
    tasks = []
    for number, offset in enumerate(offsets):
        think = (rng.expovariate(1 / args.think), rng.expovariate(1 / args.think)) if args.think else (0.0, 0.0)
        tasks.append(
            participant(
                server.port, slug, number, start + offset, think if number in consenting else None, full_code, burst
            )
        )
    began = time.perf_counter()
    await asyncio.gather(*tasks)
    seconds = round(time.perf_counter() - began, 1)
    held = await asyncio.to_thread(slots_held, slug)
    statuses = {kind: {str(k): v for k, v in sorted(by.items())} for kind, by in burst.recorder.statuses.items()}
    server_errors = sum(n for by in burst.recorder.statuses.values() for status, n in by.items() if status >= 500)
    expected_full = args.consenting - min(args.consenting, args.slots)
    return {
        "design": {"slots": args.slots, "arrivals": args.arrivals, "window_s": args.window},
        "consenting": args.consenting,
        "seconds": seconds,
        "latency": {name: latency_summary(values) for name, values in burst.latencies.items()},
        "statuses": statuses,
        "server_errors": server_errors,
        "slots_held": held,
        "admitted": burst.admitted,
        "told_full": burst.told_full,
        "other_replies": burst.other,
        "ok": server_errors == 0
        and held == min(args.slots, args.consenting)
        and burst.admitted == held
        and burst.told_full == expected_full
        and not burst.other,
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    scratch = Path(tempfile.mkdtemp(prefix="bench-launch-"))
    server = make_server(args, scratch)
    server.database = f"bench_launch_{os.getpid()}"
    info: dict = {"host": host(), "db": args.db}
    figures = run_on_server(server, scratch, args.timeout, lambda: asyncio.run(measure(server, args)))
    if figures is None:
        return 130
    info["host"]["loadavg_end"] = os.getloadavg()[0]
    info["server"] = {"gunicorn": f"gthread {args.gunicorn_workers} x {args.gunicorn_threads}"}
    text = json.dumps({**info, **figures}, indent=1)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text + "\n")
    print(text)
    return 0 if figures["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
