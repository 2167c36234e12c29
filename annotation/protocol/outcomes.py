"""The ways a participation ends (the outcome kinds), and the check of a study's code per outcome.

A study holds one code per ``Outcome`` (``Study.outcome_codes``); ``with_defaults`` fills in the
missing ones and ``validate_codes`` names what is wrong with a map. Which outcome a finished
participation has, and where it sends the worker: ``annotation.services.state.outcomes``.
"""

from __future__ import annotations

import enum
import re
import secrets
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

CODE_PATTERN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
URL_MAX = 500

# The reasons a closing study records on the events of the workers it closes out: a worker who had
# started is excluded (and paid, with the ``completed`` outcome), one who had not is abandoned.
CLOSED_REASON = "the study closed before they finished"
CLOSED_BEFORE_START_REASON = "the study closed before they started"


class Outcome(enum.StrEnum):
    COMPLETED = "completed"
    SCREENED_OUT = "screened_out"  # excluded by the training filter, the comprehension check (or by an admin)
    ATTENTION_FAILED = "attention_failed"  # excluded for failed attention checks
    DECLINED = "declined"  # said no to the consent text
    FULL = "full"  # the study had no free slot
    ALREADY_TOOK_PART = "already_took_part"


# An excluding event whose reason starts with this is an attention-check exclusion.
ATTENTION_REASON_PREFIX = "attention"


def generate_code() -> str:
    return secrets.token_hex(4).upper()


def with_defaults(codes: Any) -> dict[str, dict[str, str]]:
    """``codes`` with every outcome present, generating the missing codes (entries already there are kept)."""
    result: dict[str, dict[str, str]] = {}
    given = codes if isinstance(codes, Mapping) else {}
    for outcome in Outcome:
        entry = given.get(outcome.value)
        entry = dict(entry) if isinstance(entry, Mapping) else {}
        code = entry.get("code") or generate_code()
        result[outcome.value] = {"code": str(code), "url": str(entry.get("url") or "")}
    for key, value in given.items():  # unknown keys are kept for validate_codes to name
        result.setdefault(key, value)
    return result


def validate_codes(codes: Any) -> None:
    """ValidationError naming what is wrong with a study's ``outcome_codes`` map."""
    if codes in (None, ""):
        return
    if not isinstance(codes, Mapping):
        raise ValidationError('Outcome codes are a JSON object: outcome -> {"code": ..., "url": ...}.')
    errors: list[str] = []
    known = {o.value for o in Outcome}
    for key, entry in codes.items():
        if key not in known:
            errors.append(f"Unknown outcome {key!r}; one of {', '.join(sorted(known))}.")
            continue
        if not isinstance(entry, Mapping):
            errors.append(f'{key}: give an object {{"code": ..., "url": ...}}.')
            continue
        extra = sorted(set(entry) - {"code", "url"})
        if extra:
            errors.append(f"{key}: unknown field(s) {', '.join(extra)} (only code and url).")
        code = entry.get("code", "")
        if code not in ("", None) and (not isinstance(code, str) or not CODE_PATTERN.match(code)):
            errors.append(f"{key}: a code is 1 to 64 letters, digits, '-' or '_'; got {code!r}.")
        url = entry.get("url", "")
        if url not in ("", None):
            if not isinstance(url, str) or len(url) > URL_MAX:
                errors.append(f"{key}: the url is a text of at most {URL_MAX} characters.")
            else:
                parts = urlsplit(url)
                if parts.scheme != "https" or not parts.hostname:
                    errors.append(f"{key}: the url must be an https:// address; got {url!r}.")
    if errors:
        raise ValidationError(errors)
