"""The keyed hash that stands for a participant's platform identifier once it must no longer be kept.

HMAC-SHA256 of ``platform:id`` under ``settings.PSEUDONYM_KEY`` (only the environment holds it): the same
person always gets the same pseudonym, so a withdrawn worker who comes back is still recognised (one try
per task), while nobody without the key can go from the pseudonym back to the identifier."""

import hashlib
import hmac

from django.conf import settings

PREFIX = "pseud-"


def pseudonym(*, platform: str, external_id: str) -> str:
    """The pseudonym of ``external_id`` on ``platform`` (a pseudonym stays itself)."""
    if is_pseudonym(external_id):
        return external_id
    digest = hmac.new(settings.PSEUDONYM_KEY.encode(), f"{platform}:{external_id}".encode(), hashlib.sha256)
    return PREFIX + digest.hexdigest()[:40]  # 160 bits: no collision, and short enough for any id column


def is_pseudonym(value: str) -> bool:
    return value.startswith(PREFIX)
