"""How a running study stands, at a glance: progress per condition and the warnings that need a person.

The dashboard renders it and polls it (``live_payload``) to update in place. Each warning source is a
small function over the watched studies' rows, all of them read at once (the overview's queries do not
grow with the number of studies); add one to ``WARNING_SOURCES`` and it shows on the page and in the
live feed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Count, Max, Subquery
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


@dataclass(frozen=True)
class Watched:
    """What every warning source is given: the studies watched, the time, and their progress (read once)."""

    studies: list[Study]
    now: datetime
    progress: dict[int, list[ConditionProgress]]


Found = dict[int, list[Notice]]  # study id -> a source's notices about it (absent: none)


def stuck_slots(watched: Watched) -> Found:
    """Active workers idle past the timeout (the release sweep is not running?) or past half of it."""
    found: Found = {}
    by_id = {s.pk: s for s in watched.studies}
    last_activity: dict[int, list[datetime]] = {}
    # One row per worker at work (their slots are few), for every study at once: each has its own timeout.
    for study_id, at in Participation.objects.filter(
        study__in=watched.studies, state__in=Participation.ACTIVE_STATES
    ).values_list("study_id", "last_activity_at"):
        last_activity.setdefault(study_id, []).append(at)
    for study_id, times in last_activity.items():
        study = by_id[study_id]
        timeout = timedelta(minutes=study.abandon_after_minutes)
        overdue = sum(at < watched.now - timeout for at in times)
        idle = sum(at < watched.now - timeout * IDLE_SHARE for at in times) - overdue
        notices = found.setdefault(study_id, [])
        if overdue:
            notices.append(
                Notice(
                    "warn",
                    "stuck",
                    f"{overdue} slot(s) held past the {_minutes(study.abandon_after_minutes)} timeout: "
                    "the periodic release has not run (is Celery beat running?).",
                    overdue,
                )
            )
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
    return found


def _last_decisions(
    model: type[FilterDecision] | type[AttentionDecision] | type[IntegrityDecision], studies: list[Study], field: str
) -> dict[int, Counter[object]]:
    """Per study, how many crowd workers' last decision of ``model`` has each value of ``field`` (one query)."""
    latest = (
        model.objects.filter(participation__study__in=studies)
        .values("participation_id")
        .annotate(last=Max("id"))
        .values("last")
    )
    counts: dict[int, Counter[object]] = {}
    rows = (
        model.objects.filter(id__in=Subquery(latest), participation__is_preview=False)
        .values_list("participation__study_id", field)
        .annotate(n=Count("id"))
        .order_by()
    )
    for study_id, value, n in rows:
        counts.setdefault(study_id, Counter())[value] += n
    return counts


def screened_out(watched: Watched) -> Found:
    """Workers the training filter (or an admin) excluded: each is a slot to fill again and a pay line."""
    found: Found = {}
    for study_id, counts in _last_decisions(FilterDecision, watched.studies, "passed").items():
        failed = counts[False]
        if failed:
            found[study_id] = [
                Notice(
                    "warn",
                    "excluded",
                    f"{plural(failed, 'worker')} excluded by the training filter; review them in the admin "
                    "(Participations, filter decisions) and readmit any with a logged reason.",
                    failed,
                )
            ]
    return found


def attention_flags(watched: Watched) -> Found:
    """Workers the attention rule flagged for review (a person decides) or excluded."""
    found: Found = {}
    for study_id, counts in _last_decisions(AttentionDecision, watched.studies, "decision").items():
        notices = found.setdefault(study_id, [])
        if counts["review"]:
            notices.append(
                Notice(
                    "warn",
                    "attention-review",
                    f"{plural(counts['review'], 'worker')} flagged for review by the attention checks: decide in "
                    "the admin (Participations) whether to keep or exclude them.",
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
    return found


def integrity_flags(watched: Watched) -> Found:
    """Workers the integrity rule flagged for review (a person decides) or excluded."""
    review = {
        study_id: counts["review"]
        for study_id, counts in _last_decisions(IntegrityDecision, watched.studies, "decision").items()
    }
    # Counted once, under the rule that excluded them: a worker the attention rule excluded first may have an
    # integrity decision "excluded" beside it, and is the attention notice's.
    excluded = dict(
        Participation.objects.filter(
            study__in=watched.studies,
            state=Participation.State.EXCLUDED,
            exclusion_kind=Participation.ExclusionKind.INTEGRITY,
        )
        .values_list("study_id")
        .annotate(n=Count("id"))
        .order_by()
    )
    found: Found = {}
    for study in watched.studies:
        notices = []
        if review.get(study.pk):
            notices.append(
                Notice(
                    "warn",
                    "integrity-review",
                    f"{plural(review[study.pk], 'worker')} flagged for review by the integrity rule (copies, fast "
                    "answers, time away): see Integrity signals, and decide in the admin (Participations).",
                )
            )
        if excluded.get(study.pk):
            notices.append(
                Notice(
                    "info",
                    "integrity-excluded",
                    f"{plural(excluded[study.pk], 'worker')} excluded by the integrity rule.",
                )
            )
        found[study.pk] = notices
    return found


def finished(watched: Watched) -> Found:
    found: Found = {}
    for study in watched.studies:
        rows = watched.progress.get(study.pk, [])
        if study.status != Study.Status.CLOSED and study.in_pilot and rows and all(c.is_done for c in rows):
            found[study.pk] = [
                Notice(
                    "info",
                    "pilot-done",
                    f"The pilot is complete ({sum(c.completed for c in rows)} workers): look at its results and the "
                    f"planning figures, then open the rest (manage.py check_study {study.slug} --open-rest).",
                )
            ]
        elif study.status == Study.Status.OPEN and rows and all(c.is_done for c in rows):
            found[study.pk] = [
                Notice("info", "finished", "Every slot is completed: close the study when you are ready.")
            ]
    return found


def missing_texts(watched: Watched) -> Found:
    """Task texts a worker would read in English on a page in another language (services.texts.languages)."""
    found: Found = {}
    for study in watched.studies:
        missing = languages.missing_task_texts(study)
        if not missing or study.status == Study.Status.CLOSED:
            continue
        shown = ", ".join(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        found[study.pk] = [
            Notice(
                "warn",
                "missing-texts",
                f"{len(missing)} task text(s) missing, which workers read in English instead: {shown}. "
                "Add them on the task's admin page (Texts in …).",
                len(missing),
            )
        ]
    return found


def quality_controls_off(watched: Watched) -> Found:
    """The launch check's quality controls that are off (services.studies.launch): without them the integrity
    table's figures and "0 flagged, 0 excluded" screen nobody, and the page says so."""
    found: Found = {}
    for study in watched.studies:
        if study.status == Study.Status.DRAFT:
            continue  # a draft's page shows the whole launch check
        off = [f for f in launch.launch_check(study).looks if f.code in ("no_fail_limit", "no_integrity_rule")]
        if off:
            found[study.pk] = [
                Notice(
                    "warn",
                    "quality-off",
                    "Quality controls are off: " + " ".join(f"{f.message} ({f.fix})" for f in off),
                )
            ]
    return found


# Each source reads every watched study at once (a query or two, however many studies are watched).
WARNING_SOURCES: list[Callable[[Watched], Found]] = [
    missing_texts,
    quality_controls_off,
    stuck_slots,
    screened_out,
    attention_flags,
    integrity_flags,
    finished,
]


def notices_by_study(
    studies: Iterable[Study],
    *,
    now: datetime | None = None,
    rows: dict[int, list[ConditionProgress]] | None = None,
) -> dict[int, list[Notice]]:
    """Each study's notices, warnings first, each kind in source order (``rows``: their ``progress``, when the
    caller has read it)."""
    studies = list(studies)
    watched = Watched(studies, now or timezone.now(), progress(studies) if rows is None else rows)
    found = [source(watched) for source in WARNING_SOURCES]
    return {
        s.pk: sorted((n for by_study in found for n in by_study.get(s.pk, [])), key=lambda n: n.level != "warn")
        for s in studies
    }


def notices(study: Study, *, now: datetime | None = None) -> list[Notice]:
    return notices_by_study([study], now=now)[study.pk]


# What a researcher must act on: slots held past the timeout, flags to decide, exclusions, missing texts.
ATTENTION_KINDS = frozenset({"stuck", "excluded", "attention-review", "attention-excluded", "missing-texts"})


def needs_attention(found: Iterable[Notice]) -> int:
    """How many things of a study's notices need a researcher (the overview's badge; 0: none)."""
    return sum(n.count for n in found if n.kind in ATTENTION_KINDS)


def live_payload(studies: list[Study], *, with_notices: bool = True) -> dict[str, Any]:
    """What the dashboard polls: per study its status, conditions' progress and notices."""
    rows = progress(studies)
    found = notices_by_study(studies, rows=rows) if with_notices else {}
    return {
        "at": timezone.now().isoformat(timespec="seconds"),
        "studies": [
            {
                "slug": s.slug,
                "status": s.status,
                "status_display": s.get_status_display(),
                "conditions": [c.as_dict() for c in rows[s.pk]],
                "notices": [n.as_dict() for n in found.get(s.pk, [])],
                "needs_attention": needs_attention(found.get(s.pk, [])),
            }
            for s in studies
        ],
    }
