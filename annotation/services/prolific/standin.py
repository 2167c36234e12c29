"""A local stand-in for the Prolific API endpoints the client uses, with state and injectable failures.

Part of the application, not only of the tests: the rehearsal (annotation.rehearsal) runs a study's
Prolific operations against it, and the Prolific tests start it as their server.

Shapes follow Prolific's API reference (docs/prolific.md): a submission has ``id``, ``participant``,
``study_id`` and ``status``; setting up a bonus answers ``id``, ``study``, ``amount`` and
``total_amount`` in cents; a group answers ``id``, ``name``, ``participant_count``. Error bodies are
``{"error": {"status", "title", "detail"}}``: the reference documents none, so the client must not
depend on this shape.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "test-token"


class StandIn:
    def __init__(self) -> None:
        self.submissions: dict[str, dict[str, Any]] = {}
        self.bulks: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self.fail_participants: dict[str, int] = {}  # participant id -> status to answer
        self.rate_limit_next = 0  # answer the next N requests with 429
        self.retry_after = "0"
        self.slow_paths: list[str] = []  # answer these paths after `slow_seconds`
        self.slow_seconds = 1.5
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        port = self.server.server_address[1]  # bound to 127.0.0.1 above
        return f"http://127.0.0.1:{port}/api/v1/"

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_submission(self, *, submission_id: str, participant: str, study_id: str) -> None:
        self.submissions[submission_id] = {
            "id": submission_id,
            "participant": participant,
            "study_id": study_id,
            "status": "AWAITING REVIEW",
        }

    def paid_to(self, participant: str) -> Decimal:
        """What was paid to a participant in bonuses, over every bulk paid (as many times as it was paid)."""
        total = Decimal("0")
        for bulk in self.bulks.values():
            for pid, amount in bulk["lines"]:
                if pid == participant:
                    total += amount * bulk["paid"]
        return total

    def writes(self) -> list[tuple[str, str, dict[str, Any]]]:
        return [r for r in self.requests if r[0] != "GET"]

    # --- the handler ---------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._send(400, _error(400, "Bad JSON", "The body is not JSON."))
                with standin.lock:
                    standin.requests.append(("POST", self.path, body))
                    if standin.rate_limit_next > 0:
                        standin.rate_limit_next -= 1
                        return self._send(429, _error(429, "Too many requests", "Slow down."), retry=True)
                if self.headers.get("Authorization") != f"Token {TOKEN}":
                    return self._send(401, _error(401, "Unauthorized", "Invalid token."))
                if any(p in self.path for p in standin.slow_paths):
                    time.sleep(standin.slow_seconds)
                with standin.lock:
                    status, answer = standin.route(self.path, body)
                self._send(status, answer)

            def _send(self, status: int, answer: dict[str, Any], retry: bool = False) -> None:
                data = json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if retry:
                        self.send_header("Retry-After", standin.retry_after)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

        return Handler

    def route(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        parts = [p for p in path.split("/") if p][2:]  # after api/v1
        if parts[:1] == ["submissions"] and parts[2:] == ["transition"]:
            return self.transition(parts[1], body)
        if parts == ["submissions", "bonus-payments"]:
            return self.set_up_bonus(body)
        if parts[:1] == ["bulk-bonus-payments"] and parts[2:] == ["pay"]:
            return self.pay(parts[1])
        if parts == ["participant-groups"]:
            return self.create_group(body)
        if parts[:1] == ["participant-groups"] and parts[2:] == ["participants"]:
            return self.add_to_group(parts[1], body)
        return 404, _error(404, "Not found", path)

    def _failing(self, participants: list[str]) -> tuple[int, dict[str, Any]] | None:
        for pid in participants:
            if pid in self.fail_participants:
                status = self.fail_participants[pid]
                return status, _error(status, "Failed", f"Something went wrong for {pid}.")
        return None

    def transition(self, submission_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        sub = self.submissions.get(submission_id)
        if sub is None:
            return 404, _error(404, "Not found", "No such submission.")
        if failed := self._failing([sub["participant"]]):
            return failed
        action = body.get("action")
        if action == "REJECT" and (len(body.get("message", "")) < 100 or not body.get("rejection_category")):
            return 400, _error(400, "Invalid", "message must be at least 100 characters; category required")
        target = {"APPROVE": "APPROVED", "REJECT": "REJECTED", "COMPLETE": "SCREENED OUT"}.get(action or "")
        if target is None:
            return 400, _error(400, "Invalid", f"Unknown action {action!r}.")
        if sub["status"] not in ("AWAITING REVIEW", target):
            return 400, _error(400, "Invalid", f"Cannot {action} a submission that is {sub['status']}.")
        sub["status"] = target  # the same request twice is ignored
        return 200, dict(sub)

    def set_up_bonus(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        study = body.get("study_id")
        lines = []
        for line in str(body.get("csv_bonuses", "")).splitlines():
            pid, _, amount = line.partition(",")
            lines.append((pid, Decimal(amount)))
        known = {s["participant"] for s in self.submissions.values() if s["study_id"] == study}
        wrong = [pid for pid, _ in lines if pid not in known]
        if wrong or not lines:
            return 400, _error(400, "Invalid", f"These ids did not take part in the study: {', '.join(wrong)}")
        if failed := self._failing([pid for pid, _ in lines]):
            return failed
        bulk_id = uuid.uuid4().hex[:24]
        self.bulks[bulk_id] = {"study": study, "lines": lines, "paid": 0}
        cents = int(sum(a for _, a in lines) * 100)
        return 201, {"id": bulk_id, "study": study, "amount": cents, "fees": 0, "total_amount": cents}

    def pay(self, bulk_id: str) -> tuple[int, dict[str, Any]]:
        bulk = self.bulks.get(bulk_id)
        if bulk is None:
            return 404, _error(404, "Not found", "No such bulk bonus payment.")
        bulk["paid"] += 1  # not idempotent, as documented
        return 202, {}

    def create_group(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not body.get("name") or not body.get("workspace_id"):
            return 400, _error(400, "Invalid", "name and workspace_id are required")
        group_id = uuid.uuid4().hex[:24]
        self.groups[group_id] = {"id": group_id, "name": body["name"], "members": set()}
        return 201, {"id": group_id, "name": body["name"], "participant_count": 0}

    def add_to_group(self, group_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        group = self.groups.get(group_id)
        if group is None:
            return 404, _error(404, "Not found", "No such participant group.")
        ids = list(body.get("participant_ids") or [])
        if failed := self._failing(ids):
            return failed
        group["members"].update(ids)
        return 200, {"results": [{"participant_id": pid} for pid in sorted(group["members"])]}


def _error(status: int, title: str, detail: str) -> dict[str, Any]:
    return {"error": {"status": status, "title": title, "detail": detail}}
