"""How a participation ends, and the code and way back to the platform for each ending.

Every study has one code per ``Outcome`` (``Study.outcome_codes``): the
researcher may set each, and the missing ones are generated when the study is
saved (8 random hex digits, kept for the study's life). Prolific workers are
sent to the outcome's URL if it has one, else to Prolific's standard
completion page, with ``cc=<code>``; MTurk workers post the HIT to
``turkSubmitTo`` with the code and the outcome, and in-house workers are shown
the code.

``outcome_for(participation)`` is the one place that names a finished
participation's outcome; ``target_for(...)`` turns a study, an outcome and the
entry's platform parameters into a ``CompletionTarget``.
"""

from __future__ import annotations

from collections.abc import Mapping

from annotation.models import Participation, ParticipationEvent, Study
from annotation.protocol.outcomes import (
    ATTENTION_REASON_PREFIX,
    CLOSED_BEFORE_START_REASON,
    CLOSED_REASON,
    Outcome,
    with_defaults,
)
from annotation.services.state.platforms import (
    MTURK,
    PROLIFIC,
    CompletionTarget,
    prolific_redirect_url,
)

PROLIFIC_COMPLETE_URL = "https://app.prolific.com/submissions/complete"
State = Participation.State


def code_for(study: Study, outcome: Outcome) -> tuple[str, str]:
    """The study's (code, redirect url) for ``outcome``; url may be empty."""
    entry = (study.outcome_codes or {}).get(outcome.value) or {}
    code = entry.get("code") or ""
    if not code:
        # A study saved before it had codes (or edited by hand in the database): give one and keep it.
        study.outcome_codes = with_defaults(study.outcome_codes)
        Study.objects.filter(pk=study.pk).update(outcome_codes=study.outcome_codes)
        entry = study.outcome_codes[outcome.value]
        code = entry["code"]
    return code, entry.get("url") or ""


def outcome_for(participation: Participation) -> Outcome | None:
    """The outcome of a finished participation; None while it is still at work or was abandoned.

    Closed-out workers (excluded when the study closed) get the ``completed`` outcome: they are paid for
    the time they spent, like a worker who finished.
    """
    state = participation.state
    if state == State.COMPLETED:
        return Outcome.COMPLETED
    if state == State.DECLINED:
        return Outcome.DECLINED
    if state == State.EXCLUDED:
        kind = participation.exclusion_kind
        if kind == Participation.ExclusionKind.CLOSED:
            return Outcome.COMPLETED
        if kind == Participation.ExclusionKind.ATTENTION:
            return Outcome.ATTENTION_FAILED
        if kind in (
            Participation.ExclusionKind.TRAINING_FILTER,
            Participation.ExclusionKind.INTEGRITY,
            Participation.ExclusionKind.COMPREHENSION,
        ):
            # Neither rule judges a stated answer as wrong on purpose: screened out (paid), never "failed".
            return Outcome.SCREENED_OUT
        # An admin's exclusion, or one recorded before exclusion_kind existed: the event's reason tells.
        reason = (
            ParticipationEvent.objects.filter(participation=participation, to_state=State.EXCLUDED)
            .order_by("-at", "-id")
            .values_list("reason", flat=True)
            .first()
        ) or ""
        if reason in (CLOSED_REASON, CLOSED_BEFORE_START_REASON):
            return Outcome.COMPLETED
        if reason.lower().startswith(ATTENTION_REASON_PREFIX):
            return Outcome.ATTENTION_FAILED
        return Outcome.SCREENED_OUT
    return None


def target_for(
    *, study: Study, outcome: Outcome, platform: str, platform_data: Mapping[str, str], code: str = ""
) -> CompletionTarget:
    """How a worker with ``outcome`` is sent back: a redirect, an MTurk form post, or the code to copy.

    ``code`` overrides the study's code for the outcome (a participation keeps the code it was given).
    """
    study_code, url = code_for(study, outcome)
    code = code or study_code
    if platform == PROLIFIC:
        return CompletionTarget(
            kind="redirect", code=code, url=prolific_redirect_url(url or PROLIFIC_COMPLETE_URL, code)
        )
    submit_to = platform_data.get("turkSubmitTo", "")
    assignment = platform_data.get("assignmentId", "")
    if platform == MTURK and submit_to and assignment:
        return CompletionTarget(
            kind="form_post",
            code=code,
            url=submit_to.rstrip("/") + "/mturk/externalSubmit",
            # MTurk rejects a submission that carries nothing but the assignment id.
            fields={"assignmentId": assignment, "completion_code": code, "outcome": outcome.value},
        )
    return CompletionTarget(kind="code", code=code)


def participation_target(participation: Participation) -> CompletionTarget | None:
    """Where a finished participation is sent, with the code it was given; None while it is at work."""
    outcome = outcome_for(participation)
    if outcome is None:
        return None
    return target_for(
        study=participation.study,
        outcome=outcome,
        platform=participation.worker.platform,
        platform_data=participation.platform_data or {},
        code=participation.completion_code,
    )


def give_code(participation: Participation) -> str:
    """Record on the participation the code of its outcome (what the platform will be shown).

    A worker excluded after their finish page showed the completed code (a training-filter group judged
    after a fast worker finished, an admin's later exclusion) keeps that code (docs/studies.md, "the
    training filter"): they were shown it and may have submitted it; reopening the link shows the same."""
    outcome = outcome_for(participation)
    if outcome is None:
        return ""
    code, _ = code_for(participation.study, outcome)
    completed, _ = code_for(participation.study, Outcome.COMPLETED)
    if participation.state == State.EXCLUDED and participation.completion_code == completed != code:
        return completed
    if participation.completion_code != code:
        participation.completion_code = code
        Participation.all_objects.filter(pk=participation.pk).update(completion_code=code)
    return code
