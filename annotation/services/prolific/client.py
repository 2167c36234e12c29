"""A small client for the parts of Prolific's public API this project uses.

Every endpoint below is from Prolific's API reference (docs.prolific.com/api-reference);
docs/prolific.md lists them with what each operation sends:

- ``POST /submissions/{id}/transition/``: approve, reject (``message`` of at least 100
  characters and a ``rejection_category``) or complete with a completion code (how a
  submission becomes SCREENED OUT). Documented as idempotent.
- ``GET /studies/{id}/``: the study, whose ``reward`` (per participant, in cents of the study's
  currency) is the base the bonuses top up.
- ``POST /submissions/bonus-payments/``: set up a bonus (``study_id``, ``csv_bonuses`` with
  ``<participant_id>,<amount>`` lines in the study's currency); pays nothing.
- ``POST /bulk-bonus-payments/{id}/pay/``: pay a set-up bonus. Documented as NOT idempotent.
- ``POST /participant-groups/``: create a group (``name``, ``workspace_id``).
- ``POST /participant-groups/{id}/participants/``: add ``participant_ids``; members are ignored.
- ``DELETE /participant-groups/{id}/participants/``: remove ``participant_ids``; non-members are ignored.
- ``POST /messages/``: a message (``recipient_id``, ``body``, ``study_id``) to one participant.
- ``POST /messages/bulk/``: one message (``ids``, ``body``, ``study_id``) to many participants.
- ``POST /broadcasts/``: one message to many participants of a study, each in a conversation of its own
  (``id``, ``study_id``, ``subject``, ``body``, ``participant_ids``); our own ``id`` makes a resend return the
  broadcast already sent instead of sending it twice. At most 4,000 recipients (as a bulk message); 404 while
  broadcasts are not enabled for the study's workspace.
- ``POST /submissions/bulk-approve/``: approve many submissions (``submission_ids``) in one call; Prolific
  answers at once and approves them in the background ("Bulk approve in progress").
- ``PATCH /studies/{id}/``: a published study's ``total_available_places`` (Prolific only lets it grow).
- ``POST /studies/{id}/transition/``: ``{"action": "PAUSE"}`` or ``{"action": "START"}`` (resume).
- ``GET /studies/{id}/submissions/``: a study's submissions (``id``, ``participant_id``, ``status``).
- ``POST /hooks/secrets/``: create (or replace) the workspace's webhook secret (``id``, ``value``).
- ``POST /hooks/subscriptions/``: subscribe a ``target_url`` to an ``event_type``; the answer's
  ``X-Hook-Secret`` header is confirmed with ``POST /hooks/subscriptions/{id}/`` (``{"secret"}``).

Authentication is the header ``Authorization: Token <token>``. The reference documents no
rate-limit figures nor an error-body schema: a 429 is retried after its ``Retry-After``
(seconds, bounded by ``max_wait``), and an error's body is kept as text, whatever its shape.
A connection dropped while the answer is awaited or read (``RemoteDisconnected``, ``ConnectionResetError``,
``IncompleteRead``) is ``ProlificReplyLost``: the request may have taken effect, as after a time-out.

Plain Python (urllib, no Django): the operations module records every call through ``on_call``.
"""

from __future__ import annotations

import http.client
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

logger = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.prolific.com/api/v1/"
EXCERPT = 2000  # characters of an answer kept in the call log


class ProlificError(Exception):
    """A call to Prolific did not succeed. ``definite`` is False when it may have taken effect anyway."""

    definite = True

    def __init__(self, message: str, *, status: int | None = None, body: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class ProlificRequestError(ProlificError):
    """Prolific refused the request (4xx other than 429): nothing was done."""


class ProlificServerError(ProlificError):
    """Prolific answered 5xx: the request may or may not have taken effect."""

    definite = False


class ProlificRateLimited(ProlificError):
    """Still 429 after the retries, or the wait asked for was longer than allowed."""

    retry_after: float = 1.0


class ProlificTimeout(ProlificError):
    """No answer in time: the request may or may not have taken effect."""

    definite = False


class ProlificReplyLost(ProlificError):
    """The connection dropped while the answer was awaited or read: the request may have taken effect."""

    definite = False


class ProlificConnectionError(ProlificError):
    """Prolific could not be reached (refused, DNS, TLS): the request never arrived."""


@dataclass(frozen=True)
class CallRecord:
    """One HTTP exchange, for the call log."""

    method: str
    path: str
    request: dict[str, Any]
    status: int | None
    response: str
    ok: bool
    error: str
    seconds: float


@dataclass
class ProlificClient:
    token: str
    base_url: str = DEFAULT_BASE_URL
    timeout: float = 20.0
    max_retries: int = 3  # extra attempts after a 429
    max_wait: float = 60.0  # longest Retry-After honoured, in seconds
    on_call: Callable[[CallRecord], None] | None = None
    sleep: Callable[[float], None] = time.sleep

    # --- endpoints ---------------------------------------------------------------------------

    def approve(self, submission_id: str) -> dict[str, Any]:
        return self._post(f"submissions/{submission_id}/transition/", {"action": "APPROVE"})

    def reject(self, submission_id: str, *, message: str, category: str) -> dict[str, Any]:
        if len(message) < 100:  # Prolific's rule; checked here so a short message costs no call
            raise ProlificRequestError("A rejection message must be at least 100 characters long.")
        body = {"action": "REJECT", "message": message, "rejection_category": category}
        return self._post(f"submissions/{submission_id}/transition/", body)

    def complete(self, submission_id: str, *, completion_code: str) -> dict[str, Any]:
        """Complete with a code set up on the Prolific study (e.g. a screen-out code)."""
        body = {"action": "COMPLETE", "completion_code": completion_code}
        return self._post(f"submissions/{submission_id}/transition/", body)

    def bulk_approve(self, submission_ids: list[str]) -> dict[str, Any]:
        return self._post("submissions/bulk-approve/", {"submission_ids": submission_ids})

    def set_places(self, study_id: str, total: int) -> dict[str, Any]:
        """Set a study's total places (a published study's places may only grow)."""
        return self._request("PATCH", f"studies/{study_id}/", {"total_available_places": total})

    def transition_study(self, study_id: str, action: str) -> dict[str, Any]:
        """``PAUSE`` an active study, or ``START`` a paused one again."""
        return self._post(f"studies/{study_id}/transition/", {"action": action})

    def get_study(self, study_id: str) -> dict[str, Any]:
        return self._request("GET", f"studies/{study_id}/", None)

    def get_submission(self, submission_id: str) -> dict[str, Any]:
        """One submission: its ``study_id``, ``participant`` and ``status`` (*Retrieve a submission*)."""
        return self._request("GET", f"submissions/{submission_id}/", None)

    def posted_reward(self, study_id: str) -> Decimal:
        """The reward posted per participant on the Prolific study, in its currency (``reward`` is in cents)."""
        study = self.get_study(study_id)
        cents = study.get("reward")
        if isinstance(cents, bool) or not isinstance(cents, int | float) or cents < 0:
            raise ProlificServerError(f"Prolific gave no usable reward for study {study_id}: {cents!r}.")
        return (Decimal(str(cents)) / 100).quantize(Decimal("0.01"))

    def set_up_bonus(self, *, study_id: str, bonuses: list[tuple[str, Decimal]]) -> dict[str, Any]:
        csv = "".join(f"{pid},{amount:.2f}\n" for pid, amount in bonuses)
        return self._post("submissions/bonus-payments/", {"study_id": study_id, "csv_bonuses": csv})

    def pay_bonus(self, bulk_id: str) -> dict[str, Any]:
        return self._post(f"bulk-bonus-payments/{bulk_id}/pay/", {})

    def create_group(self, *, name: str, workspace_id: str, description: str = "") -> dict[str, Any]:
        body = {"name": name, "workspace_id": workspace_id, "description": description}
        return self._post("participant-groups/", body)

    def add_to_group(self, group_id: str, participant_ids: list[str]) -> dict[str, Any]:
        return self._post(f"participant-groups/{group_id}/participants/", {"participant_ids": participant_ids})

    def remove_from_group(self, group_id: str, participant_ids: list[str]) -> dict[str, Any]:
        body = {"participant_ids": participant_ids}
        return self._request("DELETE", f"participant-groups/{group_id}/participants/", body)

    def send_message(self, *, recipient_id: str, body: str, study_id: str) -> dict[str, Any]:
        return self._post("messages/", {"recipient_id": recipient_id, "body": body, "study_id": study_id})

    def bulk_message(self, *, ids: list[str], body: str, study_id: str) -> dict[str, Any]:
        return self._post("messages/bulk/", {"ids": ids, "body": body, "study_id": study_id})

    def broadcast(
        self, *, broadcast_id: str, study_id: str, subject: str, body: str, participant_ids: list[str]
    ) -> dict[str, Any]:
        payload = {
            "id": broadcast_id,
            "study_id": study_id,
            "subject": subject,
            "body": body,
            "participant_ids": participant_ids,
        }
        return self._post("broadcasts/", payload)

    def list_submissions(self, study_id: str) -> list[dict[str, Any]]:
        """Every submission of a Prolific study, following the answer's next page if it names one."""
        found: list[dict[str, Any]] = []
        path: str | None = f"studies/{study_id}/submissions/"
        seen: set[str] = set()
        while path and path not in seen:
            seen.add(path)
            page = self._request("GET", path, None)
            found.extend(r for r in page.get("results") or [] if isinstance(r, dict))
            path = _next_page(page, self.base_url)
        return found

    def create_secret(self, *, workspace_id: str) -> dict[str, Any]:
        return self._post("hooks/secrets/", {"workspace_id": workspace_id})

    def create_subscription(self, *, event_type: str, target_url: str, workspace_id: str) -> tuple[dict[str, Any], str]:
        """The new subscription and the ``X-Hook-Secret`` to confirm it with."""
        body = {"event_type": event_type, "target_url": target_url, "workspace_id": workspace_id, "is_enabled": True}
        headers: dict[str, str] = {}
        answer = self._request("POST", "hooks/subscriptions/", body, headers_out=headers)
        hook_secret = next((v for k, v in headers.items() if k.lower() == "x-hook-secret"), "")
        return answer, hook_secret

    def confirm_subscription(self, subscription_id: str, *, hook_secret: str) -> dict[str, Any]:
        return self._post(f"hooks/subscriptions/{subscription_id}/", {"secret": hook_secret})

    # --- transport ---------------------------------------------------------------------------

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", path, body)

    def _request(
        self, method: str, path: str, body: dict[str, Any] | None, *, headers_out: dict[str, str] | None = None
    ) -> dict[str, Any]:
        for attempt in range(self.max_retries + 1):
            try:
                return self._once(method, path, body, headers_out)
            except ProlificRateLimited as exc:
                wait = exc.retry_after
                if attempt == self.max_retries or wait > self.max_wait:
                    raise
                logger.info("Prolific rate limit on %s %s: waiting %.1f s", method, path, wait)
                self.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def _once(
        self, method: str, path: str, body: dict[str, Any] | None, headers_out: dict[str, str] | None = None
    ) -> dict[str, Any]:
        url = self.base_url.rstrip("/") + "/" + path
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(url, data=data, method=method)
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Content-Type", "application/json")
        request.add_header("Accept", "application/json")
        started = time.monotonic()
        status: int | None = None
        text = ""
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status = response.status
                text = response.read().decode("utf-8", "replace")
                if headers_out is not None:
                    headers_out.update(response.headers.items())
        except urllib.error.HTTPError as exc:
            status = exc.code
            try:
                text = exc.read().decode("utf-8", "replace")
            except (http.client.IncompleteRead, ConnectionResetError):  # the status says enough
                text = ""
            error = _http_error(method, path, exc.code, text)
            if isinstance(error, ProlificRateLimited):
                error.retry_after = _retry_after(dict(exc.headers.items()))
            self._record(method, path, body, status, text, False, str(error), started)
            raise error from None
        except TimeoutError as exc:
            error = ProlificTimeout(f"Prolific did not answer {method} {path} within {self.timeout:g} s.")
            self._record(method, path, body, None, "", False, str(error), started)
            raise error from exc
        except (http.client.IncompleteRead, ConnectionResetError) as exc:  # RemoteDisconnected is one too
            error = ProlificReplyLost(
                f"The connection dropped before Prolific's answer to {method} {path} arrived ({exc!r})."
            )
            self._record(method, path, body, status, text, False, str(error), started)
            raise error from exc
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, ConnectionResetError):  # dropped while the request was sent
                error = ProlificReplyLost(f"The connection dropped while {method} {path} was sent ({exc.reason!r}).")
                self._record(method, path, body, None, "", False, str(error), started)
                raise error from exc
            if isinstance(exc.reason, TimeoutError):
                error = ProlificTimeout(f"Prolific did not answer {method} {path} within {self.timeout:g} s.")
            else:
                error = ProlificConnectionError(f"Could not reach Prolific for {method} {path}: {exc.reason}.")
            self._record(method, path, body, None, "", False, str(error), started)
            raise error from exc
        self._record(method, path, body, status, text, True, "", started)
        if not text.strip():
            return {}
        try:
            parsed = json.loads(text)
        except ValueError:
            return {"raw": text[:EXCERPT]}
        return parsed if isinstance(parsed, dict) else {"results": parsed}

    def _record(
        self,
        method: str,
        path: str,
        body: dict[str, Any] | None,
        status: int | None,
        text: str,
        ok: bool,
        error: str,
        started: float,
    ) -> None:
        if self.on_call is None:
            return
        body, text = _withhold_secrets(path, body or {}, text)
        record = CallRecord(method, path, body, status, text[:EXCERPT], ok, error, time.monotonic() - started)
        self.on_call(record)


WITHHELD = "(withheld: holds a webhook secret)"


def _withhold_secrets(path: str, body: dict[str, Any], text: str) -> tuple[dict[str, Any], str]:
    """What the call log may keep: never the workspace's webhook secret nor a subscription's X-Hook-Secret."""
    if "secret" in body:
        body = {**body, "secret": WITHHELD}
    if path.startswith("hooks/secrets") and text:
        text = WITHHELD
    return body, text


def _next_page(page: dict[str, Any], base_url: str) -> str | None:
    """The path of the next page, if the answer names one (``_links.next.href`` or ``next``)."""
    links = page.get("_links")
    nxt = (links.get("next") or {}).get("href") if isinstance(links, dict) else page.get("next")
    if not isinstance(nxt, str) or not nxt:
        return None
    base = base_url.rstrip("/") + "/"
    return nxt[len(base) :] if nxt.startswith(base) else None  # never follow a link to another host


def _retry_after(headers: dict[str, str]) -> float:
    value = next((v for k, v in headers.items() if k.lower() == "retry-after"), "")
    try:
        return max(0.0, float(value))
    except ValueError:
        return 1.0  # absent or an HTTP date: a short, bounded wait


def _http_error(method: str, path: str, status: int, text: str) -> ProlificError:
    detail = _detail(text)
    where = f"{method} {path}"
    if status == 429:
        return ProlificRateLimited(f"Prolific rate limit on {where} (429).", status=status, body=text)
    if status in (401, 403):
        return ProlificRequestError(
            f"Prolific refused the API token on {where} ({status}): check PROLIFIC_API_TOKEN.{detail}",
            status=status,
            body=text,
        )
    if status >= 500:
        return ProlificServerError(f"Prolific failed on {where} ({status}).{detail}", status=status, body=text)
    return ProlificRequestError(f"Prolific refused {where} ({status}).{detail}", status=status, body=text)


def _detail(text: str) -> str:
    """A short reason out of an error body, whatever its shape (the reference documents none)."""
    try:
        parsed = json.loads(text)
    except ValueError:
        return f" {text.strip()[:200]}" if text.strip() else ""
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
        parsed = parsed["error"]
    if isinstance(parsed, dict):
        for key in ("detail", "title", "message"):
            if parsed.get(key):
                return f" {str(parsed[key])[:200]}"
    return f" {json.dumps(parsed)[:200]}"
