"""Free a finished request's objects at once, by reference counting, not by the garbage collector.

Django's message storage and DRF's view, request and response point at each
other, so every request used to leave a reference cycle holding the request,
the view, the parsed body and the model instances it loaded (83 objects per
submission). Only the cyclic garbage collector freed them; the collections
they caused, whole-heap ones included, stopped every thread of the process
while they ran (up to a third of a second each in the replay benchmark).
``BreakRequestCycles``, the outermost middleware, cuts those links once the
response is complete (DRF responses are rendered by then).

Kept because it reaches into request and view internals only for a measured gain: without it, three
replays alternated with three with it spent 10-37 s instead of about 1 s in garbage collection and had
a worse submit p99 in two of three (docs/performance.md, 2026-11-24).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponseBase


class BreakRequestCycles:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        # request -> message storage -> request; request -> lazy user (and auser) -> request
        for name in ("_messages", "user", "auser"):
            request.__dict__.pop(name, None)
        context = getattr(response, "renderer_context", None)
        if context:  # DRF: view <-> request (its parser context), the response in its own context
            view, drf_request = context.get("view"), context.get("request")
            if drf_request is not None:
                drf_request.parser_context = None
            if view is not None:
                view.__dict__.clear()  # also Django's view.head = view.get and DRF's view.response
            response.renderer_context = None  # type: ignore[attr-defined]  # DRF documents it; its stubs lack it
        return response
