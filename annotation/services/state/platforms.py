"""Crowd-platform parameters of an entry link, and where a finished worker goes.

Plain Python, no database: the entry service and the views build on it.

- Prolific: ``PROLIFIC_PID`` (the participant), ``STUDY_ID``, ``SESSION_ID``.
- Mechanical Turk (external question): ``workerId``, ``assignmentId``,
  ``hitId``, ``turkSubmitTo``. While a worker only previews the HIT,
  ``assignmentId`` is ``ASSIGNMENT_ID_NOT_AVAILABLE`` and there is no workerId.
- In-house: ``worker_id``.

A worker id is one exact text: surrounding white space is trimmed (no
platform issues ids with spaces, so trimming cannot merge two real ids, and a
link pasted with a trailing space or newline still names its worker); an id
that is blank, longer than the database column (``MAX_ID_LENGTH``), not valid
UTF-8 in the raw link, or that holds white space, control or invisible
characters or U+FFFD (what undecodable bytes become) is refused, so two
different ids can never end up as one worker. Ids of different platforms are
different namespaces: the same text on Prolific and in-house is two workers.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, unquote_to_bytes, urlencode, urlsplit, urlunsplit

from django.utils.translation import gettext

from annotation.errors import ServiceError

PROLIFIC = "prolific"
MTURK = "mturk"
INHOUSE = "inhouse"

logger = logging.getLogger(__name__)

MTURK_PREVIEW_ASSIGNMENT = "ASSIGNMENT_ID_NOT_AVAILABLE"
# turkSubmitTo is only ever one of these; anything else would let a link post the worker's data elsewhere.
MTURK_SUBMIT_HOSTS = {"www.mturk.com", "workersandbox.mturk.com"}
MAX_ID_LENGTH = 128  # Worker.external_id's max_length (a test keeps the two equal)
REPLACEMENT_CHARACTER = "\ufffd"

_KEPT = {
    PROLIFIC: ("STUDY_ID", "SESSION_ID"),
    MTURK: ("assignmentId", "hitId", "turkSubmitTo"),
    INHOUSE: (),
}


class BadEntry(ServiceError, ValueError):
    """The entry link's parameters do not identify a worker."""

    code = "bad_entry"


@dataclass(frozen=True)
class EntryParams:
    platform: str
    external_id: str = ""
    platform_data: dict[str, str] = field(default_factory=dict)
    preview: bool = False


def _clean_id(value: str | None, name: str) -> str:
    value = (value or "").strip()
    if not value:
        raise BadEntry(gettext("The link has no worker id (%(name)s is missing or blank).") % {"name": name})
    if len(value) > MAX_ID_LENGTH:
        raise BadEntry(
            gettext("%(name)s is longer than %(limit)d characters.") % {"name": name, "limit": MAX_ID_LENGTH}
        )
    # isprintable() is False for control and format (invisible, e.g. zero-width) characters and for
    # every space but U+0020, which isspace() catches.
    if any(not ch.isprintable() or ch.isspace() for ch in value):
        raise BadEntry(gettext("%(name)s contains spaces or control characters.") % {"name": name})
    if REPLACEMENT_CHARACTER in value:
        raise BadEntry(
            gettext("%(name)s contains characters that could not be read (not valid UTF-8).") % {"name": name}
        )
    return value


def _raw_bytes(raw_query: str) -> bytes:
    # WSGI hands the query string over as latin-1 text of the bytes received; a test client may give
    # other text, which can only have come from UTF-8.
    try:
        return raw_query.encode("latin-1")
    except UnicodeEncodeError:
        return raw_query.encode("utf-8")


def _check_utf8(raw_query: str, names: tuple[str, ...]) -> None:
    """Refuse the link if one of the parameters ``names`` is not valid UTF-8 once percent-decoded.

    Django decodes the query string before the view sees it, replacing what is not UTF-8 by U+FFFD, so
    ``worker_id=%ff`` and ``worker_id=%fe`` would both read as the same id; the raw string still tells.
    """
    for part in _raw_bytes(raw_query).split(b"&"):
        key, _, value = part.partition(b"=")
        try:
            name = unquote_to_bytes(key.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            continue  # not a name we read
        if name not in names:
            continue
        try:
            unquote_to_bytes(value.replace(b"+", b" ")).decode("utf-8")
        except UnicodeDecodeError:
            raise BadEntry(gettext("%(name)s is not valid UTF-8 text.") % {"name": name}) from None


def _check_turk_submit_to(value: str) -> None:
    parts = urlsplit(value)
    if parts.scheme != "https" or parts.hostname not in MTURK_SUBMIT_HOSTS:
        # Not a typo a worker makes: a link built to send the worker's completion elsewhere.
        logger.warning("entry refused: turkSubmitTo points at %r (scheme %r)", parts.hostname, parts.scheme)
        raise BadEntry(gettext("turkSubmitTo is not a Mechanical Turk address."))


def parse_entry(query: Mapping[str, str], *, raw_query: str | None = None) -> EntryParams:
    """Which platform sent the worker, and who they are. Raises BadEntry.

    ``query`` is the decoded query (``request.GET``), ``raw_query`` the query string as received
    (``request.META["QUERY_STRING"]``), in which the parameters read are checked to be valid UTF-8.
    """
    try:
        params = _parse_entry(query, raw_query)
    except BadEntry as exc:
        # Debug: a bad link is the link maker's or the worker's to fix; the message names no value.
        logger.debug("entry refused: %s", exc)
        raise
    if params.preview:
        logger.debug("MTurk preview (no worker yet)")
    else:
        logger.debug("entry from a %s worker", params.platform)  # never the id: logs keep no identifiers
    return params


def _parse_entry(query: Mapping[str, str], raw_query: str | None) -> EntryParams:
    if "PROLIFIC_PID" in query:
        platform, id_name = PROLIFIC, "PROLIFIC_PID"
    elif "workerId" in query or "assignmentId" in query:
        platform, id_name = MTURK, "workerId"
    elif "worker_id" in query:
        platform, id_name = INHOUSE, "worker_id"
    else:
        raise BadEntry(gettext("The link has no worker id (PROLIFIC_PID, workerId or worker_id)."))
    if raw_query:
        _check_utf8(raw_query, (id_name, *_KEPT[platform]))
    data = {k: str(query[k]).strip() for k in _KEPT[platform] if str(query.get(k) or "").strip()}
    if platform == MTURK:
        if data.get("turkSubmitTo"):
            _check_turk_submit_to(data["turkSubmitTo"])
        if data.get("assignmentId") == MTURK_PREVIEW_ASSIGNMENT:
            return EntryParams(platform=MTURK, platform_data=data, preview=True)
    return EntryParams(platform=platform, external_id=_clean_id(query.get(id_name), id_name), platform_data=data)


@dataclass(frozen=True)
class CompletionTarget:
    """How a finished worker is sent back: ``redirect`` to url, ``form_post`` of fields to url, or just the code."""

    kind: str  # "redirect" | "form_post" | "code"
    code: str
    url: str = ""
    fields: dict[str, str] = field(default_factory=dict)


def prolific_redirect_url(completion_url: str, code: str) -> str:
    """The study's Prolific completion URL, with ``cc=<code>`` added unless it already has a cc."""
    parts = urlsplit(completion_url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    if not any(k == "cc" for k, _ in query) and code:
        query.append(("cc", code))
    return urlunsplit(parts._replace(query=urlencode(query)))


def entry_links(join_url: str) -> dict[str, str]:
    """Example entry links for each platform, given the study's absolute /join/<slug>/ URL.

    Prolific fills the ``{{%...%}}`` placeholders; MTurk appends its own
    parameters to an external question's URL; in-house links name the worker.
    """
    return {
        PROLIFIC: f"{join_url}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}"
        f"&SESSION_ID={{{{%SESSION_ID%}}}}",
        MTURK: join_url,
        INHOUSE: f"{join_url}?worker_id=<worker id>",
    }
