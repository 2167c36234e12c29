"""How a running study stands, at a glance: progress per condition and the warnings that need a person.

The dashboard renders it and polls it (``live_payload``) to update in place. Each warning source is a
small function over the study's rows; add one to ``WARNING_SOURCES`` and it shows on the page and in the
live feed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import AttentionDecision, FilterDecision, IntegrityDecision, Participation, Study
from annotation.reporting.statement_design import plural
from annotation.services.state import slots
from annotation.services.studies import launch
from annotation.services.texts import languages

State = Participation.State

# An active worker idle for this share of the study's abandonment timeout is worth a look.
IDLE_SHARE = 0.5


@dataclass(frozen=True)
class ConditionProgress:
    """One condition's slots as the segments of a bar: completed, at work, free (of ``slots``)."""

    shots: int
    slots: int
    completed: int
    at_work: int
    free: int
    excluded: int
    abandoned: int

    def share(self, count: int) -> float:
        """``count`` as a percentage of the condition's slots (for the bar's segments), 0..100."""
        return round(100 * min(count, self.slots) / self.slots, 2) if self.slots else 0.0

    @property
    def completed_pct(self) -> float:
        return self.share(self.completed)

    @property
    def at_work_pct(self) -> float:
        return min(self.share(self.at_work), round(100 - self.completed_pct, 2))

    @property
    def is_done(self) -> bool:
        return self.completed >= self.slots

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "completed_pct": self.completed_pct, "at_work_pct": self.at_work_pct}


@dataclass(frozen=True)
class Notice:
    """A warning (``level`` "warn") or a note ("info") about a study, in words a researcher acts on."""

    level: str
    kind: str
    text: str
    count: int = 0  # the workers (or texts) it is about: what the overview's needs-attention badge adds up

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def progress(studies: Iterable[Study]) -> dict[int, list[ConditionProgress]]:
    """Study id -> its conditions' progress, by shots (one aggregate query for all the studies)."""
    return {
        study_id: [
            ConditionProgress(
                shots=c.shots,
                slots=c.slots,
                completed=c.completed,
                at_work=c.claimed + c.in_training + c.in_test,
                free=c.free,
                excluded=c.excluded,
                abandoned=c.abandoned,
            )
            for c in rows
        ]
        for study_id, rows in slots.condition_counts(studies).items()
    }


def _minutes(n: float) -> str:
    return f"{n:.0f} minute{'s' if round(n) != 1 else ''}"


def stuck_slots(study: Study, now: datetime) -> list[Notice]:
    """Active workers idle past the timeout (the release sweep is not running?) or past half of it."""
    timeout = timedelta(minutes=study.abandon_after_minutes)
    active = Participation.objects.filter(study=study, state__in=Participation.ACTIVE_STATES)
    counts = active.aggregate(
        overdue=Count("id", filter=Q(last_activity_at__lt=now - timeout)),
        idle=Count("id", filter=Q(last_activity_at__lt=now - timeout * IDLE_SHARE)),
    )
    notices = []
    if counts["overdue"]:
        notices.append(
            Notice(
                "warn",
                "stuck",
                f"{counts['overdue']} slot(s) held past the {_minutes(study.abandon_after_minutes)} timeout: "
                "the periodic release has not run (is Celery beat running?).",
                counts["overdue"],
            )
        )
    idle = counts["idle"] - counts["overdue"]
    if idle:
        notices.append(
            Notice(
                "info",
                "idle",
                f"{plural(idle, 'worker')} idle for over {_minutes(study.abandon_after_minutes * IDLE_SHARE)}; "
                f"their slots are released after {_minutes(study.abandon_after_minutes)}.",
                idle,
            )
        )
    return notices


def screened_out(study: Study, now: datetime) -> list[Notice]:
    """Workers the training filter (or an admin) excluded: each is a slot to fill again and a pay line."""
    latest = (
        FilterDecision.objects.filter(participation__study=study)
        .values("participation_id")
        .annotate(last=Max("id"))
        .values_list("last", flat=True)
    )
    failed = FilterDecision.objects.filter(id__in=list(latest), passed=False, participation__is_preview=False).count()
    if not failed:
        return []
    return [
        Notice(
            "warn",
            "excluded",
            f"{plural(failed, 'worker')} excluded by the training filter; review them in the admin "
            "(Participations, filter decisions) and readmit any with a logged reason.",
            failed,
        )
    ]


def _last_decisions(model: type[AttentionDecision] | type[IntegrityDecision], study: Study) -> Counter[str]:
    """How many crowd workers' last decision of ``model`` is each verdict."""
    latest = (
        model.objects.filter(participation__study=study, participation__is_preview=False)
        .values("participation_id")
        .annotate(last=Max("id"))
        .values_list("last", flat=True)
    )
    return Counter(model.objects.filter(id__in=list(latest)).values_list("decision", flat=True))


def attention_flags(study: Study, now: datetime) -> list[Notice]:
    """Workers the attention rule flagged for review (a person decides) or excluded."""
    counts = _last_decisions(AttentionDecision, study)
    notices = []
    if counts["review"]:
        notices.append(
            Notice(
                "warn",
                "attention-review",
                f"{plural(counts['review'], 'worker')} flagged for review by the attention checks: decide in the admin "
                "(Participations) whether to keep or exclude them.",
                counts["review"],
            )
        )
    if counts["excluded"]:
        notices.append(
            Notice(
                "info",
                "attention-excluded",
                f"{plural(counts['excluded'], 'worker')} excluded by the attention checks.",
                counts["excluded"],
            )
        )
    return notices


def integrity_flags(study: Study, now: datetime) -> list[Notice]:
    """Workers the integrity rule flagged for review (a person decides) or excluded."""
    counts = _last_decisions(IntegrityDecision, study)
    # Counted once, under the rule that excluded them: a worker the attention rule excluded first may have an
    # integrity decision "excluded" beside it, and is the attention notice's.
    counts["excluded"] = Participation.objects.filter(
        study=study, state=Participation.State.EXCLUDED, exclusion_kind=Participation.ExclusionKind.INTEGRITY
    ).count()
    notices = []
    if counts["review"]:
        notices.append(
            Notice(
                "warn",
                "integrity-review",
                f"{plural(counts['review'], 'worker')} flagged for review by the integrity rule (copies, fast answers, "
                "time away): see Integrity signals, and decide in the admin (Participations).",
            )
        )
    if counts["excluded"]:
        notices.append(
            Notice(
                "info", "integrity-excluded", f"{plural(counts['excluded'], 'worker')} excluded by the integrity rule."
            )
        )
    return notices


def finished(study: Study, now: datetime) -> list[Notice]:
    rows = progress([study])[study.pk]
    if study.status != Study.Status.CLOSED and study.in_pilot and rows and all(c.is_done for c in rows):
        return [
            Notice(
                "info",
                "pilot-done",
                f"The pilot is complete ({sum(c.completed for c in rows)} workers): look at its results and the "
                f"planning figures, then open the rest (manage.py check_study {study.slug} --open-rest).",
            )
        ]
    if study.status == Study.Status.OPEN and rows and all(c.is_done for c in rows):
        return [Notice("info", "finished", "Every slot is completed: close the study when you are ready.")]
    return []


def missing_texts(study: Study, now: datetime) -> list[Notice]:
    """Task texts a worker would read in English on a page in another language (services.texts.languages)."""
    missing = languages.missing_task_texts(study)
    if not missing or study.status == Study.Status.CLOSED:
        return []
    shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
    return [
        Notice(
            "warn",
            "missing-texts",
            f"{len(missing)} task text(s) missing, which workers read in English instead: {shown}. "
            "Add them on the task's admin page (Texts in …).",
            len(missing),
        )
    ]


def quality_controls_off(study: Study, now: datetime) -> list[Notice]:
    """The launch check's quality controls that are off (services.studies.launch): without them the integrity
    table's figures and "0 flagged, 0 excluded" screen nobody, and the page says so."""
    off = [f for f in launch.launch_check(study).looks if f.code in ("no_fail_limit", "no_integrity_rule")]
    if not off or study.status == Study.Status.DRAFT:
        return []  # a draft's page shows the whole launch check
    return [
        Notice("warn", "quality-off", "Quality controls are off: " + " ".join(f"{f.message} ({f.fix})" for f in off))
    ]


WARNING_SOURCES: list[Callable[[Study, datetime], list[Notice]]] = [
    missing_texts,
    quality_controls_off,
    stuck_slots,
    screened_out,
    attention_flags,
    integrity_flags,
    finished,
]


def notices(study: Study, *, now: datetime | None = None) -> list[Notice]:
    now = now or timezone.now()
    found = [notice for source in WARNING_SOURCES for notice in source(study, now)]
    return sorted(found, key=lambda n: n.level != "warn")  # warnings first, in source order


# What a researcher must act on: slots held past the timeout, flags to decide, exclusions, missing texts.
ATTENTION_KINDS = frozenset({"stuck", "excluded", "attention-review", "attention-excluded", "missing-texts"})


def needs_attention(found: Iterable[Notice]) -> int:
    """How many things of a study's notices need a researcher (the overview's badge; 0: none)."""
    return sum(n.count for n in found if n.kind in ATTENTION_KINDS)


def live_payload(studies: list[Study], *, with_notices: bool = True) -> dict[str, Any]:
    """What the dashboard polls: per study its status, conditions' progress and notices."""
    rows = progress(studies)
    return {
        "at": timezone.now().isoformat(timespec="seconds"),
        "studies": [
            {
                "slug": s.slug,
                "status": s.status,
                "status_display": s.get_status_display(),
                "conditions": [c.as_dict() for c in rows[s.pk]],
                "notices": [n.as_dict() for n in found],
                "needs_attention": needs_attention(found),
            }
            for s in studies
            for found in [notices(s) if with_notices else []]
        ],
    }
