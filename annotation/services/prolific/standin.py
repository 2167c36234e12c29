"""A local stand-in for the Prolific API endpoints the client uses, with state and injectable failures.

Part of the application, not only of the tests: the rehearsal (annotation.rehearsal) runs a study's
Prolific operations against it, and the Prolific tests start it as their server.

Shapes follow Prolific's API reference (docs/prolific.md): a submission has ``id``, ``participant``,
``study_id`` and ``status``; a study (``GET /studies/{id}/``) has ``id``, ``name``, ``status`` and
``reward`` (per participant, in cents); setting up a bonus answers ``id``, ``study``, ``amount`` and
``total_amount`` in cents; a group answers ``id``, ``name``, ``participant_count``. Error bodies are
``{"error": {"status", "title", "detail"}}``: the reference documents none, so the client must not
depend on this shape.

Webhooks, as Prolific's reference describes them: a workspace secret (``POST hooks/secrets/``), a
subscription per event type (``POST hooks/subscriptions/`` answers an ``X-Hook-Secret`` header, which
``POST hooks/subscriptions/{id}/`` confirms). A status change (``set_status``, ``return_submission``,
``time_out``) is sent at once to every confirmed subscription of ``submission.status.change``, signed
the way the reference's example does it: base64(HMAC-SHA256(secret, timestamp + json.dumps(body))),
with ``X-Prolific-Request-Signature``, ``X-Prolific-Request-Timestamp``, ``X-Event-ID`` and
``X-Timestamp``. ``GET studies/{id}/submissions/`` serves the submissions for polling.

Submissions: the statuses of Prolific's reference (``STATUSES``, its "Submission object" and the transition
endpoint's PARTIALLY APPROVED); ``GET submissions/{id}/`` answers one (with its ``study_id``). Places: Prolific
reopens the place of a RETURNED or REJECTED submission by itself (the reference: "The study place becomes
available for another participant"), and of a TIMED-OUT one (its help pages); each study's ``places`` records it
(``taken`` goes down, ``reopened`` up), whether the status came from ``set_status`` or a transition. Every other
status keeps its place.
``GET studies/{id}/`` shows them (``total_available_places``, ``places_taken``); ``PATCH studies/{id}/`` sets
the total of a published study, which may only grow (400 otherwise); ``POST studies/{id}/transition/`` pauses
(``PAUSE``) an ACTIVE study or starts (``START``) a PAUSED one again. ``POST submissions/bulk-approve/``
approves ``submission_ids`` (or a ``study_id`` and ``participant_ids``): all or none (400 for an id it does
not know), answering a plain string as Prolific does.

Messages: ``POST messages/`` (``recipient_id``, ``body``, ``study_id``) and ``POST messages/bulk/`` (``ids``,
``body``, ``study_id``) answer 204 with no body; ``POST broadcasts/`` (``id``, ``study_id``, ``subject``,
``body``, ``participant_ids``) answers 201 with the broadcast (``id``, ``study_id``, ``subject``, ``topic``,
``body``, ``audience_source``, ``recipient_count``, ``datetime_created``, ``replied_count``), or 200 with the
same broadcast, sending nothing, when its ``id`` was used before; 404 unless ``broadcasts_enabled``; every
recipient must have a submission in the study; over ``MESSAGE_RECIPIENT_LIMIT`` recipients is a 400 naming
the limit. Each message reaches ``inbox[participant]``. ``DELETE participant-groups/{id}/participants/``
removes ``participant_ids`` (non-members ignored).

Lost answers: ``drop_reply[path fragment] = "close" | "reset" | "truncate"`` makes the next request whose
path contains the fragment take effect and then lose its answer: the connection is closed before any byte
(the client sees ``RemoteDisconnected``), reset (``ConnectionResetError``), or closed half-way through the
body (``IncompleteRead``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import struct
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "test-token"
SUBMISSION_EVENT = "submission.status.change"
# Prolific's submission statuses (docs/prolific.md, "Places of rejected submissions"), and those whose place
# Prolific opens to another participant by itself.
STATUSES = (
    "RESERVED",
    "ACTIVE",
    "TIMED-OUT",
    "AWAITING REVIEW",
    "APPROVED",
    "RETURNED",
    "REJECTED",
    "SCREENED OUT",
    "PARTIALLY APPROVED",
)
REOPENING = ("RETURNED", "TIMED-OUT", "REJECTED")
# Prolific's reference: a broadcast "can go to as many people as a bulk message, 4,000 by default".
MESSAGE_RECIPIENT_LIMIT = 4000


def sign(secret: str, timestamp: str, body: str) -> str:
    """Prolific's signature, as its reference's Python example computes it."""
    return base64.b64encode(hmac.new(secret.encode(), (timestamp + body).encode(), hashlib.sha256).digest()).decode()


class StandIn:
    def __init__(self) -> None:
        self.submissions: dict[str, dict[str, Any]] = {}
        self.bulks: dict[str, dict[str, Any]] = {}
        self.groups: dict[str, dict[str, Any]] = {}
        self.studies: dict[str, dict[str, Any]] = {}
        self.secrets: dict[str, dict[str, str]] = {}  # workspace id -> {"id", "value"}
        self.subscriptions: dict[str, dict[str, Any]] = {}
        self.places: dict[str, dict[str, int]] = {}  # Prolific study id -> {"total", "taken", "reopened"}
        self.sent: list[dict[str, Any]] = []  # every webhook sent: url, headers, body, answer
        self.requests: list[tuple[str, str, dict[str, Any]]] = []
        self.broadcasts: dict[str, dict[str, Any]] = {}
        self.broadcasts_enabled = True  # the workspace has broadcasts (404 otherwise, as documented)
        self.inbox: dict[str, list[str]] = {}  # participant id -> the bodies they received, in order
        self.fail_participants: dict[str, int] = {}  # participant id -> status to answer
        self.rate_limit_next = 0  # answer the next N requests with 429
        self.retry_after = "0"
        self.slow_paths: list[str] = []  # answer these paths after `slow_seconds`
        self.slow_seconds = 1.5
        self._slow_running = 0  # slow requests still being answered (``settle`` waits for them)
        self._settled = threading.Condition()
        self.drop_reply: dict[str, str] = {}  # path fragment -> how the answer is lost (once)
        # Called with (method, path) as each request arrives, before it is handled: a test may hold it there
        # to interleave two runs (it runs on the request's own thread, the stand-in's lock not held).
        self.on_request: Callable[[str, str], None] | None = None
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        # A short poll: ``stop`` waits for the serving loop's next poll (0.5 s by default, at every test's end).
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        port = self.server.server_address[1]  # bound to 127.0.0.1 above
        return f"http://127.0.0.1:{port}/api/v1/"

    def start(self) -> StandIn:
        self.thread.start()
        return self

    def settle(self, timeout: float = 10.0) -> None:
        """Wait until every slow request has taken effect (its client may have given up on it long ago)."""
        with self._settled:
            if not self._settled.wait_for(lambda: self._slow_running == 0, timeout=timeout):
                raise TimeoutError(f"slow requests still running after {timeout:g} s")

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add_study(self, *, study_id: str, reward: int | None, **fields: Any) -> None:
        """A Prolific study; ``reward`` is per participant, in cents (as Prolific's study object has it)."""
        self.studies[study_id] = {"id": study_id, "name": study_id, "status": "ACTIVE", "reward": reward, **fields}
        self.places.setdefault(study_id, {"total": 0, "taken": 0, "reopened": 0})

    def add_submission(
        self, *, submission_id: str, participant: str, study_id: str, status: str = "AWAITING REVIEW"
    ) -> None:
        self.submissions[submission_id] = {
            "id": submission_id,
            "participant": participant,
            "study_id": study_id,
            "status": status,
        }
        place = self.places.setdefault(study_id, {"total": 0, "taken": 0, "reopened": 0})
        place["taken"] += status not in REOPENING

    def set_places(self, study_id: str, total: int) -> None:
        """The Prolific study's total places (``total_available_places``)."""
        self.places.setdefault(study_id, {"total": 0, "taken": 0, "reopened": 0})["total"] = total

    # --- webhooks ------------------------------------------------------------------------------

    def submission_of(self, participant: str) -> dict[str, Any]:
        return next(s for s in self.submissions.values() if s["participant"] == participant)

    def return_submission(self, participant: str) -> list[dict[str, Any]]:
        """The participant returns the study on Prolific: the status changes and the webhooks go out."""
        return self.set_status(self.submission_of(participant)["id"], "RETURNED")

    def time_out(self, participant: str) -> list[dict[str, Any]]:
        return self.set_status(self.submission_of(participant)["id"], "TIMED-OUT")

    def set_status(self, submission_id: str, status: str, *, notify: bool = True) -> list[dict[str, Any]]:
        assert status in STATUSES, status
        with self.lock:
            sub = self.submissions[submission_id]
            self._move(sub, status)
        if not notify:
            return []
        payload = {
            "resource_id": submission_id,
            "event_type": SUBMISSION_EVENT,
            "participant_id": sub["participant"],
            "status": status,
        }
        return self.notify(payload)

    def _move(self, sub: dict[str, Any], status: str) -> None:
        """A submission's new status; a place it held and now frees opens to another participant (lock held)."""
        if status in REOPENING and sub["status"] not in REOPENING:
            place = self.places[sub["study_id"]]
            place["taken"] -= 1
            place["reopened"] += 1
        sub["status"] = status

    def notify(self, payload: dict[str, Any], **overrides: Any) -> list[dict[str, Any]]:
        """Send ``payload`` to every confirmed subscription of its event type; returns what was sent."""
        subs = [
            s
            for s in self.subscriptions.values()
            if s["confirmed"] and s["is_enabled"] and s["event_type"] == payload["event_type"]
        ]
        secret = lambda sub: self.secrets.get(sub["workspace_id"], {}).get("value", "")  # noqa: E731
        return [self.deliver(sub["target_url"], payload, secret=secret(sub), **overrides) for sub in subs]

    def deliver(
        self,
        url: str,
        payload: dict[str, Any],
        *,
        secret: str,
        timestamp: str | None = None,
        event_id: str | None = None,
        event_time: str | None = None,
        signature: str | None = None,
    ) -> dict[str, Any]:
        """POST one signed event (each part can be overridden to forge or replay one)."""
        body = json.dumps(payload)
        timestamp = timestamp or str(int(time.time()))
        headers = {
            "Content-Type": "application/json",
            "X-Prolific-Request-Timestamp": timestamp,
            "X-Prolific-Request-Signature": signature or sign(secret, timestamp, body),
            "X-Event-ID": event_id or uuid.uuid4().hex[:24],
            "X-Timestamp": event_time or timestamp,
        }
        return self.post(url, headers, body)

    def post(self, url: str, headers: dict[str, str], body: str) -> dict[str, Any]:
        request = urllib.request.Request(url, data=body.encode(), method="POST", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, answer = response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            status, answer = exc.code, exc.read().decode()
        sent = {"url": url, "headers": headers, "body": body, "status": status, "answer": answer}
        self.sent.append(sent)
        return sent

    def replay(self, sent: dict[str, Any]) -> dict[str, Any]:
        """Send an event again, byte for byte (what an attacker who saw it could do)."""
        return self.post(sent["url"], sent["headers"], sent["body"])

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

            def do_GET(self) -> None:
                with standin.lock:
                    standin.requests.append(("GET", self.path, {}))
                if standin.on_request is not None:
                    standin.on_request("GET", self.path)
                if self.headers.get("Authorization") != f"Token {TOKEN}":
                    return self._send(401, _error(401, "Unauthorized", "Invalid token."))
                parts = [p for p in self.path.split("?")[0].split("/") if p][2:]  # after api/v1
                if parts[:1] == ["submissions"] and len(parts) == 2:
                    with standin.lock:
                        one = standin.submissions.get(parts[1])
                        copy = None if one is None else dict(one)
                    if copy is None:
                        return self._send(404, _error(404, "Not found", self.path))
                    return self._send(200, copy)
                if parts[:1] == ["studies"] and parts[2:] == ["submissions"]:
                    with standin.lock:
                        found = [s for s in standin.submissions.values() if s["study_id"] == parts[1]]
                        results = [
                            {"id": s["id"], "participant_id": s["participant"], "status": s["status"]} for s in found
                        ]
                    return self._send(200, {"results": results})
                with standin.lock:
                    study = standin.studies.get(parts[1]) if parts[:1] == ["studies"] and len(parts) == 2 else None
                    answer = None if study is None else standin.study_answer(parts[1])
                if answer is None:
                    return self._send(404, _error(404, "Not found", self.path))
                self._send(200, answer)

            def do_PATCH(self) -> None:
                self._write("PATCH")

            def do_POST(self) -> None:
                self._write("POST")

            def do_DELETE(self) -> None:
                self._write("DELETE")

            def _write(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    return self._send(400, _error(400, "Bad JSON", "The body is not JSON."))
                with standin.lock:
                    standin.requests.append((method, self.path, body))
                    if standin.rate_limit_next > 0:
                        standin.rate_limit_next -= 1
                        return self._send(429, _error(429, "Too many requests", "Slow down."), retry=True)
                if self.headers.get("Authorization") != f"Token {TOKEN}":
                    return self._send(401, _error(401, "Unauthorized", "Invalid token."))
                if standin.on_request is not None:
                    standin.on_request(method, self.path)
                slow = any(p in self.path for p in standin.slow_paths)
                if slow:
                    with standin._settled:
                        standin._slow_running += 1
                    time.sleep(standin.slow_seconds)
                with standin.lock:
                    status, answer, *headers = standin.route(method, self.path, body)
                    drop = next((how for frag, how in standin.drop_reply.items() if frag in self.path), None)
                    if drop is not None:
                        standin.drop_reply = {k: v for k, v in standin.drop_reply.items() if v is not drop}
                if slow:
                    with standin._settled:
                        standin._slow_running -= 1
                        standin._settled.notify_all()
                if drop is not None:
                    return self._lose(drop, status, answer)
                self._send(status, answer, headers=headers[0] if headers else None)

            def _lose(self, how: str, status: int, answer: dict[str, Any]) -> None:
                """The request took effect; its answer never arrives whole."""
                self.close_connection = True
                if how == "truncate":
                    data = json.dumps(answer).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data) + 100))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                elif how == "reset":  # linger 0: the close sends RST, not FIN (the fd closes once the handler ends)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.connection.close()
                else:  # "close": FIN before any byte of the answer
                    self.connection.shutdown(socket.SHUT_RDWR)

            def _send(
                self, status: int, answer: dict[str, Any], retry: bool = False, headers: dict[str, str] | None = None
            ) -> None:
                data = b"" if status == 204 else json.dumps(answer).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    if retry:
                        self.send_header("Retry-After", standin.retry_after)
                    for name, value in (headers or {}).items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting

        return Handler

    def study_answer(self, study_id: str) -> dict[str, Any]:
        place = self.places.get(study_id, {"total": 0, "taken": 0})
        return {**self.studies[study_id], "total_available_places": place["total"], "places_taken": place["taken"]}

    def route(self, method: str, path: str, body: dict[str, Any]) -> tuple[Any, ...]:
        parts = [p for p in path.split("/") if p][2:]  # after api/v1
        if method == "PATCH":
            if parts[:1] == ["studies"] and len(parts) == 2:
                return self.update_study(parts[1], body)
            return 404, _error(404, "Not found", path)
        if method == "DELETE":
            if parts[:1] == ["participant-groups"] and parts[2:] == ["participants"]:
                return self.remove_from_group(parts[1], body)
            return 404, _error(404, "Not found", path)
        if parts == ["messages"]:
            return self.message(body)
        if parts == ["messages", "bulk"]:
            return self.bulk_message(body)
        if parts == ["broadcasts"]:
            return self.broadcast(body)
        if parts[:1] == ["studies"] and parts[2:] == ["transition"]:
            return self.transition_study(parts[1], body)
        if parts == ["submissions", "bulk-approve"]:
            return self.bulk_approve(body)
        if parts == ["hooks", "secrets"]:
            return self.create_secret(body)
        if parts == ["hooks", "subscriptions"]:
            return self.create_subscription(body)
        if parts[:2] == ["hooks", "subscriptions"] and len(parts) == 3:
            return self.confirm_subscription(parts[2], body)
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
        self._move(sub, target)  # the same request twice is ignored
        return 200, dict(sub)

    def bulk_approve(self, body: dict[str, Any]) -> tuple[int, Any]:
        ids = list(body.get("submission_ids") or [])
        if not ids and body.get("study_id"):
            wanted = set(body.get("participant_ids") or [])
            ids = [
                s["id"]
                for s in self.submissions.values()
                if s["study_id"] == body["study_id"] and s["participant"] in wanted
            ]
        unknown = [i for i in ids if i not in self.submissions]
        if not ids or unknown:
            return 400, _error(400, "Invalid", f"Unknown submissions: {', '.join(unknown) or 'none given'}")
        if failed := self._failing([self.submissions[i]["participant"] for i in ids]):
            return failed
        for i in ids:
            if self.submissions[i]["status"] == "AWAITING REVIEW":
                self._move(self.submissions[i], "APPROVED")
        return 200, "The request to bulk approve has been made successfully."

    def update_study(self, study_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if study_id not in self.studies:
            return 404, _error(404, "Not found", "No such study.")
        if set(body) - {"total_available_places", "internal_name"}:
            return 400, _error(400, "Invalid", "A published study only takes internal_name and total_available_places.")
        total = body.get("total_available_places")
        if total is not None:
            place = self.places[study_id]
            if not isinstance(total, int) or total < place["total"]:
                return 400, _error(400, "Invalid", f"total_available_places cannot go below {place['total']}.")
            place["total"] = total
        return 200, self.study_answer(study_id)

    def transition_study(self, study_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        study = self.studies.get(study_id)
        if study is None:
            return 404, _error(404, "Not found", "No such study.")
        moves = {("PAUSE", "ACTIVE"): "PAUSED", ("START", "PAUSED"): "ACTIVE"}
        target = moves.get((str(body.get("action")), str(study["status"])))
        if target is None:
            return 400, _error(400, "Invalid", f"Cannot {body.get('action')} a study that is {study['status']}.")
        study["status"] = target
        return 200, self.study_answer(study_id)

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

    def remove_from_group(self, group_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        group = self.groups.get(group_id)
        if group is None:
            return 404, _error(404, "Not found", "No such participant group.")
        group["members"].difference_update(body.get("participant_ids") or [])
        return 200, {"results": [{"participant_id": pid} for pid in sorted(group["members"])]}

    def _deliver(self, ids: list[str], text: str) -> None:
        for pid in ids:
            self.inbox.setdefault(pid, []).append(text)

    def message(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if not body.get("recipient_id") or not body.get("body") or not body.get("study_id"):
            return 400, _error(400, "Invalid", "recipient_id, body and study_id are required")
        if failed := self._failing([body["recipient_id"]]):
            return failed
        self._deliver([body["recipient_id"]], body["body"])
        return 204, {}

    def bulk_message(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        ids = list(body.get("ids") or [])
        if not ids or not body.get("body") or not body.get("study_id"):
            return 400, _error(400, "Invalid", "ids, body and study_id are required")
        if len(ids) > MESSAGE_RECIPIENT_LIMIT:
            return 400, _error(400, "Invalid", f"At most {MESSAGE_RECIPIENT_LIMIT} recipients.")
        if failed := self._failing(ids):
            return failed
        self._deliver(ids, body["body"])
        return 204, {}

    def broadcast(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        study = body.get("study_id")
        if not self.broadcasts_enabled or study not in self.studies:
            return 404, _error(404, "Not found", "Broadcasts are not enabled for this study's workspace.")
        own = body.get("id")
        if own and own in self.broadcasts:  # the same id again: the broadcast already sent, nothing sent twice
            return 200, dict(self.broadcasts[own])
        ids = list(body.get("participant_ids") or [])
        if not ids or not body.get("body") or not body.get("subject"):
            return 400, _error(400, "Invalid", "participant_ids, subject and body are required")
        if len(ids) > MESSAGE_RECIPIENT_LIMIT:
            return 400, _error(400, "Invalid", f"At most {MESSAGE_RECIPIENT_LIMIT} recipients.")
        took_part = {s["participant"] for s in self.submissions.values() if s["study_id"] == study}
        if wrong := [pid for pid in ids if pid not in took_part]:
            return 400, _error(400, "Invalid", f"No submission in the study: {', '.join(wrong)}")
        if failed := self._failing(ids):
            return failed
        broadcast_id = own or uuid.uuid4().hex[:24]
        self.broadcasts[broadcast_id] = {
            "id": broadcast_id,
            "study_id": study,
            "subject": body["subject"],
            "topic": body.get("topic"),
            "body": body["body"],
            "audience_source": "participant_ids",
            "recipient_count": len(ids),
            "datetime_created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "replied_count": 0,
        }
        self._deliver(ids, body["body"])
        return 201, dict(self.broadcasts[broadcast_id])

    def create_secret(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        workspace = body.get("workspace_id")
        if not workspace:
            return 400, _error(400, "Invalid", "workspace_id is required")
        # One secret per workspace: a new one replaces the old.
        self.secrets[workspace] = {"id": uuid.uuid4().hex[:24], "value": uuid.uuid4().hex + uuid.uuid4().hex}
        return 201, {**self.secrets[workspace], "workspace_id": workspace}

    def create_subscription(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        workspace = body.get("workspace_id")
        if not body.get("event_type") or not body.get("target_url") or not workspace:
            return 400, _error(400, "Invalid", "event_type, target_url and workspace_id are required"), {}
        if workspace not in self.secrets:
            return 400, _error(400, "Invalid", "Create a secret for the workspace first."), {}
        sub_id = uuid.uuid4().hex[:24]
        hook_secret = uuid.uuid4().hex
        sub = {
            "id": sub_id,
            "event_type": body["event_type"],
            "target_url": body["target_url"],
            "workspace_id": workspace,
            "is_enabled": body.get("is_enabled", True),
        }
        self.subscriptions[sub_id] = {**sub, "confirmed": False, "hook_secret": hook_secret}
        return 201, {"results": [sub]}, {"X-Hook-Secret": hook_secret}

    def confirm_subscription(self, sub_id: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        sub = self.subscriptions.get(sub_id)
        if sub is None:
            return 404, _error(404, "Not found", "No such subscription.")
        if body.get("secret") != sub["hook_secret"]:
            return 400, _error(400, "Invalid", "The secret does not match.")
        sub["confirmed"] = True
        return 200, {k: v for k, v in sub.items() if k not in ("confirmed", "hook_secret")}


def _error(status: int, title: str, detail: str) -> dict[str, Any]:
    return {"error": {"status": status, "title": title, "detail": detail}}
