"""Content-Security-Policy: one strict policy on every response, and per-view changes to it.

Django 5.2 has no CSP of its own. ``ContentSecurityPolicyMiddleware`` sets the
header on every response (pages, JSON, redirects, error pages, static files):
``settings.CSP_POLICY``, a dict of directive -> list of sources, changed by

- ``settings.CSP_PATH_UPDATES``, path prefix -> directives to replace, for
  code that is not ours to decorate (the Django admin, Swagger UI); the
  longest matching prefix wins;
- the ``csp_update(**directives)`` view decorator, which replaces the named
  directives for that view's responses (``form_action=[...]`` names
  ``form-action``), applied over a path update;
- ``csp_exempt``: no header at all (nothing here uses it; for a view that
  must never be constrained, say why beside it).

A directive given an empty list is left out. The site's pages load their
scripts and styles from its own static files only: no inline ``<script>``,
``<style>`` or ``style=""`` (scripts may still set ``element.style``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

HEADER = "Content-Security-Policy"
_UPDATE_ATTR = "_csp_update"
_EXEMPT_ATTR = "_csp_exempt"

Policy = Mapping[str, Sequence[str]]


def _directives(kwargs: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    return {name.replace("_", "-"): list(sources) for name, sources in kwargs.items()}


def build_header(policy: Policy) -> str:
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in policy.items() if sources)


def csp_update(**directives: Sequence[str]) -> Callable:
    """View decorator: replace these directives (``frame_ancestors=["'self'", ...]``) on the view's responses."""
    update = _directives(directives)

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> HttpResponse:
            response = view(*args, **kwargs)
            setattr(response, _UPDATE_ATTR, {**getattr(response, _UPDATE_ATTR, {}), **update})
            return response

        return wrapped

    return decorator


def csp_exempt(view: Callable) -> Callable:
    """View decorator: no Content-Security-Policy header on the view's responses."""

    @wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> HttpResponse:
        response = view(*args, **kwargs)
        setattr(response, _EXEMPT_ATTR, True)
        return response

    return wrapped


def policy_for(request: HttpRequest, response: HttpResponse) -> dict[str, list[str]]:
    policy = {name: list(sources) for name, sources in settings.CSP_POLICY.items()}
    prefixes = [p for p in getattr(settings, "CSP_PATH_UPDATES", {}) if request.path.startswith(p)]
    if prefixes:
        policy.update(_directives(settings.CSP_PATH_UPDATES[max(prefixes, key=len)]))
    policy.update(getattr(response, _UPDATE_ATTR, {}))
    return policy


class ContentSecurityPolicyMiddleware:
    """Sets the policy on every response that has none yet (outside WhiteNoise, so static files get it too)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if getattr(response, _EXEMPT_ATTR, False) or HEADER in response:
            return response
        response[HEADER] = build_header(policy_for(request, response))
        return response
