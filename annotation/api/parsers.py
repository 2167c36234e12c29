"""The API's JSON parser: DRF's, with limits on nesting and size that answer 4xx, never 500.

``JSONParser`` is DRF's default parser here (``REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"]``);
``SessionJSONParser`` is the worker session API's, with a smaller body limit.

- **Nesting**: at most ``MAX_DEPTH`` levels of arrays and objects, else 400 ``too_deep``. Python's
  decoder recurses and raises RecursionError near 1,000 levels, which DRF does not catch (a 500);
  that is answered ``too_deep`` too, and the depth of what did parse is measured without recursion.
- **Size**: a body over Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB) is 413 ``too_large``
  (annotation.api.errors maps Django's RequestDataTooBig); the session API's bodies are capped at
  ``SESSION_MAX_BODY``, far above any real submission.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from typing import IO, Any

from rest_framework import exceptions, parsers

# Far deeper than any body the API takes (a submission is 3 levels), far below the decoder's recursion.
MAX_DEPTH = 32
# A submission is {item, spans, offset_unit, confidence}: at most MAX_SPANS spans of context text.
SESSION_MAX_BODY = 64 * 1024


# Here, not in annotation.api.errors: DRF imports this module while loading its settings, and errors
# imports DRF's views, which need those settings (a circular import).
class TooLarge(exceptions.APIException):
    status_code = 413
    default_detail = "The request body is too large."
    default_code = "too_large"


def json_depth(value: Any, limit: int | None = None) -> int:
    """How many arrays and objects deep ``value`` is (a scalar is 0), walked without recursion.

    With ``limit``, stops as soon as the depth is known to exceed it (and returns limit + 1).
    """
    deepest = 0
    stack = [(value, 1)]
    while stack:
        node, level = stack.pop()
        children: Iterable[Any]
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        deepest = max(deepest, level)
        if limit is not None and deepest > limit:
            return deepest
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _too_deep() -> exceptions.ParseError:
    return exceptions.ParseError(f"JSON nested more than {MAX_DEPTH} levels deep", code="too_deep")


class JSONParser(parsers.JSONParser):
    max_body: int | None = None  # None: Django's DATA_UPLOAD_MAX_MEMORY_SIZE alone

    def parse(
        self, stream: IO[Any], media_type: str | None = None, parser_context: Mapping[str, Any] | None = None
    ) -> Any:
        if self.max_body is not None:
            # DRF hands JSON parsers the body already read (and capped by Django): check its length only.
            raw = stream.read(self.max_body + 1)
            if len(raw) > self.max_body:
                raise TooLarge(f"The request body is over {self.max_body} bytes.")
            stream = io.BytesIO(raw)
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise _too_deep() from None
        if json_depth(data, MAX_DEPTH) > MAX_DEPTH:
            raise _too_deep()
        return data


class SessionJSONParser(JSONParser):
    max_body = SESSION_MAX_BODY
