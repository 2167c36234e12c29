"""Strict parsing of settings from the environment.

A value that is present but malformed raises ImproperlyConfigured naming the
variable, so a typo in a deployment fails loudly at start-up instead of
silently falling back to a default.
"""

import os
import re
from typing import overload

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


@overload
def env_str(name: str, default: str) -> str: ...
@overload
def env_str(name: str, default: None = None) -> str | None: ...
def env_str(name: str, default: str | None = None) -> str | None:
    value = os.environ.get(name)
    return default if value is None else value.strip()


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {value!r}")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be an integer; got {value!r}") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value!r}")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    items = [item.strip() for item in value.split(",")]
    if any(not item for item in items):
        raise ImproperlyConfigured(f"{name} must be a comma-separated list without empty items; got {value!r}")
    return items


def env_header(name: str, default: str | None) -> str | None:
    """An HTTP header name (e.g. X-Forwarded-Proto) as Django's META key (HTTP_X_FORWARDED_PROTO); ``none``: None."""
    value = os.environ.get(name)
    header = default if value is None else value.strip()
    if not header or header.lower() == "none":
        return None
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9-]*", header):
        raise ImproperlyConfigured(
            f"{name} must be an HTTP header name such as X-Forwarded-Proto, or none; got {value!r}"
        )
    return "HTTP_" + header.upper().replace("-", "_")
