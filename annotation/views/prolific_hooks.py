"""Prolific's webhooks: ``POST /hooks/prolific/`` (the URL ``manage.py prolific subscribe`` registers).

Plain view, no session or CSRF: the request is authenticated by its signature
(``annotation.services.prolific.webhooks``). Answers 200 once the event is recorded (or was already),
400 for a request that is not a readable webhook, 403 for one that is not signed by Prolific or is stale;
a refusal records nothing and is logged (without the signature).
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from annotation.services.prolific import webhooks

logger = logging.getLogger(__name__)


@csrf_exempt
@require_POST
def receive(request: HttpRequest) -> JsonResponse:
    try:
        event = webhooks.receive(headers=request.headers, body=request.body)
    except (webhooks.BadWebhook, webhooks.WebhookRefused) as exc:
        logger.warning(
            "Prolific webhook refused (%d) from %s: %s", exc.status, request.META.get("REMOTE_ADDR", "?"), exc.detail
        )
        return JsonResponse({"error": exc.code, "detail": exc.detail}, status=exc.status)
    if event is None:
        return JsonResponse({"status": "duplicate"})  # Prolific's advice: acknowledge a redelivery
    return JsonResponse({"status": "recorded", "outcome": event.outcome})
