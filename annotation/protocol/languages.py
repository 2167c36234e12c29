"""The languages a study may be set to: one the worker UI ships in (``settings.LANGUAGES``), or none.

``""`` (``FOLLOW_BROWSER``) means the worker's browser language; choosing it per request:
``annotation.services.texts.languages``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError

FOLLOW_BROWSER = ""


def shipped() -> list[str]:
    """The codes of the languages the worker UI ships in, default first."""
    return [code for code, _ in settings.LANGUAGES]


def study_language_choices() -> list[tuple[str, str]]:
    """Choices of ``Study.language`` (a callable, so that adding a language needs no migration)."""
    return [(FOLLOW_BROWSER, "The worker's browser language"), *settings.LANGUAGES]


def validate_language(code: object, *, allow_browser: bool = True) -> str:
    """``code`` if it is a shipped language (or "" when ``allow_browser``); else a ValidationError naming them."""
    if isinstance(code, str) and (code in shipped() or (allow_browser and code == FOLLOW_BROWSER)):
        return code
    known = ", ".join(repr(c) for c in shipped())
    browser = ' or "" (the worker\'s browser language)' if allow_browser else ""
    raise ValidationError(f"Unknown language {code!r}: use one of {known}{browser}.")
