"""Setting up Prolific's webhooks: the workspace's secret and one subscription per event type.

``plan`` is the dry run (from our database alone: nothing is sent); ``run`` does what is still to do and
records every call (``ProlificCall``; the secret is withheld from the log). Prolific's steps
(docs/prolific.md): create the workspace's secret (``POST hooks/secrets/``; it replaces any other secret
of the workspace), subscribe the URL to an event type (``POST hooks/subscriptions/``, whose answer
carries an ``X-Hook-Secret`` header), confirm the subscription with it (``POST hooks/subscriptions/{id}/``).

The secret is stored in the database (``ProlificHookSecret``), where the webhook view reads it. A second
run skips what is done: a stored secret is kept, a confirmed subscription is not made again.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction

from annotation.errors import ServiceError
from annotation.models import ProlificHookSecret, ProlificSubscription
from annotation.services.prolific import runs as operations
from annotation.services.prolific.client import DEFAULT_BASE_URL, ProlificClient, ProlificError
from annotation.services.prolific.webhooks import EVENT_TYPES

TODO, DONE, FAILED = operations.TODO, operations.DONE, operations.FAILED


class BadSubscription(ServiceError, ValueError):
    code = "invalid"


@dataclass
class Step:
    what: str
    state: str
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check(target_url: str, workspace_id: str) -> None:
    parts = urlsplit(target_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BadSubscription(f"The webhook URL must be an absolute URL; got {target_url!r}.")
    # Prolific requires https:// (a local stand-in may take http).
    if parts.scheme != "https" and settings.PROLIFIC_API_URL == DEFAULT_BASE_URL:
        raise BadSubscription("Prolific only calls https:// URLs that are publicly reachable.")
    if not workspace_id:
        raise BadSubscription("No workspace: set PROLIFIC_WORKSPACE_ID (or pass --workspace).")


def plan(*, target_url: str, workspace_id: str) -> list[Step]:
    _check(target_url, workspace_id)
    secret = ProlificHookSecret.objects.filter(workspace_id=workspace_id).first()
    steps = [
        Step("secret", DONE, f"stored since {secret.created_at:%Y-%m-%d %H:%M}")
        if secret
        else Step("secret", TODO, "create the workspace's webhook secret (replaces any other of the workspace)")
    ]
    for event_type in EVENT_TYPES:
        sub = ProlificSubscription.objects.filter(
            workspace_id=workspace_id, event_type=event_type, target_url=target_url
        ).first()
        if sub is not None and sub.confirmed:
            steps.append(Step(event_type, DONE, f"subscription {sub.subscription_id}"))
        else:
            steps.append(Step(event_type, TODO, f"subscribe {target_url} and confirm"))
    return steps


def run(*, target_url: str, workspace_id: str, client: ProlificClient | None = None) -> list[Step]:
    """Create what the plan says is to do. Raises ProlificDisabled; a refused call is reported in its step."""
    steps = plan(target_url=target_url, workspace_id=workspace_id)
    client = client or operations.make_client()
    client.on_call = operations.CallLog()
    for step in steps:
        if step.state == DONE:
            continue
        try:
            if step.what == "secret":
                step.note = _create_secret(client, workspace_id)
            else:
                step.note = _subscribe(client, step.what, target_url, workspace_id)
            step.state = DONE
        except ProlificError as exc:
            step.state, step.note = FAILED, str(exc)
            if step.what == "secret":
                break  # Prolific refuses subscriptions without a secret
    return steps


def _create_secret(client: ProlificClient, workspace_id: str) -> str:
    answer = client.create_secret(workspace_id=workspace_id)
    value = str(answer.get("value") or "")
    if not value:
        raise ProlificError("Prolific's answer has no secret value.")
    ProlificHookSecret.objects.update_or_create(
        workspace_id=workspace_id, defaults={"value": value, "secret_id": str(answer.get("id") or "")[:64]}
    )
    return "created and stored"


def _subscription_id(answer: dict[str, Any], event_type: str, target_url: str) -> str:
    # The reference shows the created subscription as a list (``results``); its guide says ``id``.
    if answer.get("id"):
        return str(answer["id"])
    for sub in answer.get("results") or []:
        if isinstance(sub, dict) and sub.get("event_type") == event_type and sub.get("target_url") == target_url:
            return str(sub.get("id") or "")
    return ""


def _subscribe(client: ProlificClient, event_type: str, target_url: str, workspace_id: str) -> str:
    with transaction.atomic():
        sub, _ = ProlificSubscription.objects.get_or_create(
            workspace_id=workspace_id, event_type=event_type, target_url=target_url
        )
    answer, hook_secret = client.create_subscription(
        event_type=event_type, target_url=target_url, workspace_id=workspace_id
    )
    sub.subscription_id = _subscription_id(answer, event_type, target_url)[:64]
    sub.save(update_fields=["subscription_id", "updated_at"])
    if not sub.subscription_id or not hook_secret:
        raise ProlificError("Prolific's answer has no subscription id or X-Hook-Secret to confirm it with.")
    client.confirm_subscription(sub.subscription_id, hook_secret=hook_secret)
    sub.confirmed = True
    sub.save(update_fields=["confirmed", "updated_at"])
    return f"subscription {sub.subscription_id}, confirmed"
