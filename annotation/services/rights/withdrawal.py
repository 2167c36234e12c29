"""A participant withdraws: their answers and consent records go, their identifier becomes a pseudonym.

``withdraw`` is the one function the command, the admin and the API call. What it deletes: answers
(Response, AnswerSpan), survey answers, comprehension attempts, the verdicts computed from them, and the
consent records (consented_at/consent_hash, ConsentDecline). What it keeps, without the identifier
(docs/participants.md): the participation row itself, answerless and marked withdrawn (it keeps its slot:
the place was used and paid), its Prolific action rows with the payment figures (they keep anyone from
being paid twice), and a ``Withdrawal`` record (study, condition, date, who ran it). Every stored copy of
the platform identifier, in any table and JSON column, is replaced by its keyed hash
(``state.pseudonyms``), by which the entry still recognises the worker and refuses a second try.

A withdrawal covers all of the person's participations; ``study`` only checks they took part there.
Once the erasure is committed, they are taken out of the Prolific participant groups of their tasks
(``prolific.group.remove_member``): a failure there is reported, and changes nothing of the erasure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotation.errors import ServiceError
from annotation.models import (
    AuditEntry,
    ComprehensionAttempt,
    ConsentDecline,
    ExportJob,
    Participation,
    Response,
    Study,
    SurveyResponse,
    Withdrawal,
    Worker,
)
from annotation.services import audit
from annotation.services.prolific import group as prolific_group
from annotation.services.rights import scrub
from annotation.services.state import pseudonyms


class WithdrawalError(ServiceError):
    """Bad input: an unknown identifier, another study's participant, a second withdrawal. Nothing changed."""

    code = "withdrawal_refused"
    status = 400


class UnknownParticipant(WithdrawalError):
    """No such participant (or no such study)."""

    code = "not_found"
    status = 404


class AlreadyWithdrawn(WithdrawalError):
    code = "already_withdrawn"
    status = 409


@dataclass
class Plan:
    """What a withdrawal deletes, pseudonymises and keeps (the dry run prints it)."""

    worker: Worker
    pseudonym: str
    participations: list[Participation]
    declines: list[ConsentDecline]
    deleted: dict[str, int] = field(default_factory=dict)
    identifier_copies: dict[str, int] = field(default_factory=dict)
    kept_actions: int = 0
    stale_exports: int = 0
    groups: list[str] = field(default_factory=list)
    group_notes: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"participant {self.worker.platform}:<given id> -> pseudonym {self.pseudonym}"]
        for p in self.participations:
            out.append(f"participation in {p.study.slug} / {p.condition} (state {p.state}, slot {p.slot_index})")
        for d in self.declines:
            out.append(f"consent declined in {d.study.slug}")
        out += [f"delete {n} {what}" for what, n in self.deleted.items()]
        out += [f"pseudonymise {n} row(s) of {where}" for where, n in self.identifier_copies.items()]
        out.append(f"keep {self.kept_actions} Prolific action row(s) (payment figures), pseudonymised")
        out.append(f"mark {self.stale_exports} export(s) stale")
        if not self.group_notes:
            out += [f"remove from Prolific participant group {name!r}" for name in self.groups]
        return out + self.group_notes


def _exports_of(study_ids: set[int]) -> list[ExportJob]:
    done = ExportJob.objects.filter(stale_since__isnull=True)
    return [job for job in done if set(job.params.get("studies", [])) & study_ids or not job.params.get("studies")]


def plan(*, platform: str, external_id: str, study_slug: str | None = None) -> Plan:
    """What withdrawing this participant would do; raises ``WithdrawalError`` on bad input."""
    alias = pseudonyms.pseudonym(platform=platform, external_id=external_id)
    worker = Worker.objects.filter(platform=platform, external_id=external_id).first()
    if worker is None:
        stored = {"participation__worker__platform": platform, "participation__worker__external_id": alias}
        if Withdrawal.objects.filter(**stored).exists():
            raise AlreadyWithdrawn("this participant has already withdrawn: nothing left to erase")
        raise UnknownParticipant(f"no {platform} participant with this id is stored")
    participations = list(
        Participation.all_objects.filter(worker=worker, is_preview=False).select_related("study", "condition")
    )
    declines = list(ConsentDecline.objects.filter(worker=worker).select_related("study"))
    if study_slug is not None:
        study = Study.objects.filter(slug=study_slug).first()
        if study is None:
            raise UnknownParticipant(f"no study {study_slug!r}")
        if not any(p.study_id == study.pk for p in participations) and not any(
            d.study_id == study.pk for d in declines
        ):
            raise WithdrawalError(f"this participant did not take part in study {study_slug!r}")
    if not participations and not declines:
        raise WithdrawalError("this participant never took part in a study (a staff preview?)")
    if any(p.withdrawn_at for p in participations):
        raise AlreadyWithdrawn("this participant has already withdrawn")
    active = [p for p in participations if p.state in Participation.ACTIVE_STATES]
    if active:
        raise WithdrawalError(
            f"this participant is still at work in {active[0].study.slug}: withdraw once their step has ended"
        )
    ids = [p.pk for p in participations]
    responses = Response.all_objects.filter(participation__in=ids)
    result = Plan(worker=worker, pseudonym=alias, participations=participations, declines=declines)
    result.deleted = {
        "answer(s)": responses.count(),
        "survey answer(s)": SurveyResponse.objects.filter(participation__in=ids).count(),
        "comprehension attempt(s)": ComprehensionAttempt.objects.filter(participation__in=ids).count(),
        "consent record(s)": sum(bool(p.consented_at) for p in participations) + len(declines),
    }
    result.identifier_copies = scrub.count_everywhere(external_id)
    result.kept_actions = sum(p.prolific_actions.count() for p in participations)
    if platform == Worker.Platform.PROLIFIC:  # the groups hold Prolific ids only
        result.groups = [g.name for g in prolific_group.groups_of({p.task_id for p in participations})]
    result.stale_exports = len(_exports_of({p.study_id for p in participations} | {d.study_id for d in declines}))
    return result


def plan_only(
    *, platform: str, external_id: str, study_slug: str | None = None, run_by: str, actor: audit.Actor = None
) -> Plan:
    """The dry run: ``plan``, with the signature of ``withdraw``; the audit trail gets who asked and what
    it listed (under the pseudonym)."""
    with transaction.atomic():
        found = plan(platform=platform, external_id=external_id, study_slug=study_slug)
        studies = {p.study for p in found.participations} | {d.study for d in found.declines}
        audit.record(
            actor=actor if actor is not None else run_by,
            action=AuditEntry.Action.WITHDRAW_DRY_RUN,
            study=next(iter(studies)) if len(studies) == 1 else None,
            worker=found.worker,
            detail={"plan": found.lines(), "participations": [p.pk for p in found.participations]},
        )
    return found


def _audited(p: Participation) -> dict[str, object]:
    """A participation as the trail shows it before and after a withdrawal."""
    return {
        "state": p.state,
        "withdrawn_at": p.withdrawn_at,
        "consented": p.consented_at is not None,
        "answers": Response.all_objects.filter(participation=p).count(),
        "survey_answers": SurveyResponse.objects.filter(participation=p).count(),
        "comprehension_attempts": ComprehensionAttempt.objects.filter(participation=p).count(),
    }


def withdraw(
    *, platform: str, external_id: str, study_slug: str | None = None, run_by: str, actor: audit.Actor = None
) -> Plan:
    """Withdraw the participant (see the module's docstring); all or nothing. Returns what was done.
    The audit trail gets one entry per participation (before and after), and one per consent decline."""
    with transaction.atomic():
        done = plan(platform=platform, external_id=external_id, study_slug=study_slug)
        now = timezone.now()
        ids = [p.pk for p in done.participations]
        before = {p.pk: _audited(p) for p in done.participations}
        # The answers and everything computed from them or said by the participant.
        Response.all_objects.filter(participation__in=ids).delete()  # AnswerSpan cascades
        SurveyResponse.objects.filter(participation__in=ids).delete()
        ComprehensionAttempt.objects.filter(participation__in=ids).delete()
        for p in done.participations:
            p.filter_decisions.all().delete()
            p.attention_decisions.all().delete()
            p.integrity_decisions.all().delete()
            Withdrawal.objects.create(participation=p, study=p.study, condition=p.condition, at=now, run_by=run_by)
        Participation.all_objects.filter(pk__in=ids).update(withdrawn_at=now, consented_at=None, consent_hash="")
        ConsentDecline.objects.filter(pk__in=[d.pk for d in done.declines]).delete()
        # Recorded before the identifier is replaced: any copy of it here is replaced with the rest.
        who = actor if actor is not None else run_by
        for p in done.participations:
            after = _audited(Participation.all_objects.get(pk=p.pk))
            audit.record(
                actor=who, action=AuditEntry.Action.WITHDRAW, participation=p, before=before[p.pk], after=after, at=now
            )
        for d in done.declines:
            audit.record(
                actor=who,
                action=AuditEntry.Action.WITHDRAW,
                study=d.study,
                worker=done.worker,
                before={"consent_declined": True},
                after={"consent_declined": False},
                at=now,
            )
        # Every stored copy of the identifier, the Worker row's included, becomes the pseudonym.
        scrub.replace_everywhere(external_id, done.pseudonym)
        study_ids = {p.study_id for p in done.participations} | {d.study_id for d in done.declines}
        for job in _exports_of(study_ids):
            if job.file and _holds(job, external_id):
                job.file.delete(save=False)  # a file that names them goes; the others only turn stale
            job.stale_since = now
            job.save(update_fields=["file", "stale_since"])
    if platform == Worker.Platform.PROLIFIC:
        done.group_notes = prolific_group.remove_member(
            participant=external_id, pseudonym=done.pseudonym, task_ids={p.task_id for p in done.participations}
        )
    return done


def _holds(job: ExportJob, needle: str) -> bool:
    try:
        with job.file.open("rb") as f:
            return needle.encode() in f.read()
    except FileNotFoundError:
        return False
