"""The one base of the errors a service raises to refuse a request: a stable code and an HTTP status.

Low in the layers (it imports no Django model), so the protocol, the models and every service may raise
one. The API answers each in its one error shape, ``{"error": code, "detail": detail, ...extra}``, with
``status`` (annotation.api.errors.exception_handler, the only mapping); HTML views show ``detail``.
A refusal with ``code == "invalid"`` is a validation error: its body carries ``fields`` as DRF's do.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    """A request a service refused, and why. Subclasses set ``code`` and ``status`` (or an instance does)."""

    code: str = "invalid"
    status: int = 400
    detail: str  # the sentence for people: the message, unless a subclass stores its own

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.detail = str(self)

    @property
    def fields(self) -> dict[str, list[str]]:
        """For ``invalid``: each input field's messages; ``""`` stands for the input as a whole."""
        return {"": [self.detail]}

    def extra(self) -> dict[str, Any]:
        """Keys of its own that the error body carries (e.g. the stored answer of ``already_locked``)."""
        return {}
