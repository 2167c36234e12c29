"""Configuring studies: their conditions, the standard CLUES design and status.

A study's conditions are shot levels: 0 (zero-shot, no training set) or a
shot level of the study's training split (10/20/30 in CLUES), whose ExampleSet
becomes the condition's training set. The standard design is the four CLUES
conditions with three workers each on the split's *nested* sets, so a
30-shot worker's first ten examples are exactly what a 10-shot worker saw.

How a study's slots stand (filled, free, per state) is ``slots.condition_counts``.

Errors are django ValidationErrors keyed by field, so the admin, the API and
the commands can all show them next to what was wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from annotation.models import AuditEntry, Condition, Participation, Study
from annotation.protocol.outcomes import with_defaults
from annotation.services import audit
from annotation.services.admission import closing
from annotation.services.session import samples
from annotation.services.state import slots
from annotation.services.studies import preview
from annotation.services.texts import languages
from tasks_app.models import Example, ExampleSet, Task, TrainingSplit

STANDARD_SHOTS = (0, 10, 20, 30)
STANDARD_WORKERS = 3

# Study fields an admin may set through create/update (the rest are derived).
EDITABLE_FIELDS = (
    "name",
    "workers_per_condition",
    "hourly_rate",
    "currency",
    "test_order",
    "abandon_after_minutes",
    "filter_rule",
    "filter_threshold",
    "filter_reference",
    "filter_group_timeout_minutes",
    "outcome_codes",
    "worker_title",
    "worker_description",
    "consent_required",
    "consent_text",
    "survey",
    "survey_placement",
    "comprehension",
    "attention_fail_limit",
    "attention_action",
    "integrity_max_copies",
    "integrity_max_fast_share",
    "integrity_max_hidden_share",
    "integrity_hidden_seconds",
    "integrity_action",
    "language",
    "translations",
    "platform_minimum_hourly",
    "platform_recommended_hourly",
    "ethics_review",
    "ethics_board",
    "ethics_reference",
    "checklist_answers",
    "preregistration",
    "ai_instruction",
    "data_licence",
    "prolific_sync_places",
    "pilot_workers_per_condition",
) + tuple(name for name in ("base_reward",) if name in {f.name for f in Study._meta.get_fields()})

STATUS_TRANSITIONS: dict[str, set[str]] = {
    Study.Status.DRAFT: {Study.Status.OPEN, Study.Status.CLOSED},
    Study.Status.OPEN: {Study.Status.PAUSED, Study.Status.CLOSED},
    Study.Status.PAUSED: {Study.Status.OPEN, Study.Status.CLOSED},
    Study.Status.CLOSED: set(),
}


# --- Shot levels and training sets ------------------------------------------------


def available_shots(*, task: Task, split_number: int) -> list[int]:
    """The shot levels a study of this task and split can have: 0 and the split's training sets."""
    levels = ExampleSet.objects.filter(task=task, role=ExampleSet.Role.TRAIN, split__number=split_number).values_list(
        "shots", flat=True
    )
    # A training set has a shot level (example_set_role_matches_split): the `is not None` drops nothing.
    return [0, *sorted({shots for shots in levels if shots is not None})]


def _training_sets(*, task: Task, split_number: int, shots: Iterable[int]) -> dict[int, ExampleSet | None]:
    """Shot level -> its ExampleSet (None for zero-shot); ValidationError naming what is missing."""
    shots = sorted(set(shots))
    if not shots:
        raise ValidationError({"shots": "A study needs at least one condition (0, 10, 20 or 30 shots)."})
    bad = [s for s in shots if not isinstance(s, int) or isinstance(s, bool) or s < 0]
    if bad:
        raise ValidationError({"shots": f"Shot levels are whole numbers >= 0; got {bad}."})
    few_shot = [s for s in shots if s > 0]
    if not few_shot:
        return {0: None}
    if not TrainingSplit.objects.filter(task=task, number=split_number).exists():
        raise ValidationError(
            {"split_number": f"Task {task.slug} has no training split {split_number}: import it first."}
        )
    sets = {
        es.shots: es
        for es in ExampleSet.objects.filter(
            task=task, role=ExampleSet.Role.TRAIN, split__number=split_number, shots__in=few_shot
        )
    }
    missing = [s for s in few_shot if s not in sets]
    if missing:
        have = available_shots(task=task, split_number=split_number)
        raise ValidationError(
            {"shots": f"Split {split_number} of {task.slug} has no {missing}-shot training set (available: {have})."}
        )
    empty = [s for s in few_shot if not sets[s].items.exists()]
    if empty:
        raise ValidationError({"shots": f"The {empty}-shot training set of split {split_number} is empty."})
    return {s: sets.get(s) for s in shots}


def check_nested(*, task: Task, split_number: int, shots: Iterable[int]) -> None:
    """Refuse a split whose shot levels are not nested (smaller sets within larger ones)."""
    split = TrainingSplit.objects.filter(task=task, number=split_number).first()
    if split is None:
        raise ValidationError({"split_number": f"Task {task.slug} has no training split {split_number}."})
    if not (split.is_nested or split.nested_built):
        raise ValidationError(
            {
                "split_number": f"The training sets of {split} are not nested (10 within 20 within 30), so the "
                "conditions would not be comparable. Re-import the split with nested sets built from the 30-shot file."
            }
        )
    previous: set[int] = set()
    for level in sorted(s for s in shots if s > 0):
        ids = set(ExampleSet.objects.get(split=split, shots=level).items.values_list("example_id", flat=True))
        if not previous <= ids:
            raise ValidationError(
                {
                    "split_number": f"{split} claims to be nested, but its {level}-shot set "
                    "does not contain the smaller sets."
                }
            )
        previous = ids


def _check_task_has_test_set(task: Task) -> None:
    test_set = ExampleSet.objects.filter(task=task, role=ExampleSet.Role.TEST).first()
    if test_set is None or not test_set.items.exists():
        raise ValidationError({"task": f"Task {task.slug} has no test set yet: import it before opening a study."})


# --- Create and update ----------------------------------------------------------


def _validated_options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(options) - set(EDITABLE_FIELDS))
    if unknown:
        raise ValidationError({name: "Unknown or read-only study field." for name in unknown})
    return options


def settings_fields() -> list[str]:
    """A study's settings as the audit trail compares them: every field but the status (its own entries)
    and the time of the last save."""
    return [
        f.name
        for f in Study._meta.concrete_fields
        if f.name not in ("id", "status", "closes_at") and not getattr(f, "auto_now", False)
    ]


def study_save(*, study: Study, update_fields: Iterable[str] | None = None, actor: audit.Actor = None) -> None:
    """Save a study as every caller (admin, API, commands) must: with a code for every outcome from the
    start, stable for the study's life (an admin may change it), and null survey, comprehension check or
    translations (which ``clean_fields`` lets through, as the fields may be blank) stored as none.

    The audit trail gets the study's creation, or the settings that changed with their values before and
    after (rules, thresholds, texts, pay: every field but the status)."""
    study.outcome_codes = with_defaults(study.outcome_codes)
    if study.survey is None:
        study.survey = []
    if study.comprehension is None:
        study.comprehension = []
    if study.translations is None:
        study.translations = {}
    fields = settings_fields()
    with transaction.atomic():
        stored = Study.objects.filter(pk=study.pk).first() if study.pk else None
        study.save(update_fields=update_fields)
        if stored is None:
            audit.record(
                actor=actor, action=AuditEntry.Action.STUDY_CREATE, study=study, after=audit.snapshot(study, fields)
            )
            return
        before, after = audit.changes(audit.snapshot(stored, fields), audit.snapshot(study, fields))
        if before or after:
            audit.record(actor=actor, action=AuditEntry.Action.STUDY_SETTINGS, study=study, before=before, after=after)


def _full_clean(study: Study) -> None:
    study.full_clean(validate_unique=True, validate_constraints=True)


def study_create(
    *,
    task: Task,
    slug: str,
    name: str = "",
    split_number: int = 1,
    shots: Iterable[int] = STANDARD_SHOTS,
    actor: audit.Actor = None,
    **options: Any,
) -> Study:
    """A draft study with one condition per shot level; ValidationError if anything is missing."""
    shots = list(shots)
    study = Study(
        task=task,
        slug=slug,
        name=name or f"{task.name} ({slug})",
        split_number=split_number,
        **_validated_options(options),
    )
    _full_clean(study)
    validate_design(task=task, split_number=split_number, shots=shots)
    try:
        with transaction.atomic():
            study_save(study=study, actor=actor)
            set_conditions(study=study, shots=shots, actor=actor)
    except IntegrityError:  # a concurrent create took the slug between the check and the insert
        raise ValidationError({"slug": f"A study with slug {slug!r} already exists."}) from None
    return study


def _has_participants(study: Study) -> bool:
    return Participation.objects.filter(study=study).exists()


def validate_design(*, task: Task, split_number: int, shots: Iterable[int]) -> None:
    """ValidationError unless every shot level exists (with examples) in the task's split."""
    _training_sets(task=task, split_number=split_number, shots=shots)


def validate_change(
    *,
    study: Study,
    split_number: int | None = None,
    shots: Iterable[int] | None = None,
    workers_per_condition: int | None = None,
    test_order: str | None = None,
    pilot_workers_per_condition: int | None = None,
) -> None:
    """What may change once a study exists: the design and the test order only while nobody has joined,
    N never below the slots held, nor a running pilot's share."""
    current = sorted(study.conditions.values_list("shots", flat=True))
    changes_design = (split_number is not None and split_number != study.split_number) or (
        shots is not None and sorted(set(shots)) != current
    )
    if changes_design and study.test_sample_size is not None:
        raise ValidationError(
            {"shots": "A study with a test sample draws its conditions' items once, at creation: create a new study."}
        )
    if changes_design and _has_participants(study):
        raise ValidationError(
            {"shots": "Workers have already joined this study: its split and conditions can no longer change."}
        )
    if test_order is not None and test_order != study.test_order and _has_participants(study):
        raise ValidationError(
            {
                "test_order": "Workers have already joined this study: changing the test order would reorder the "
                "items of workers in the middle of their test step."
            }
        )
    if workers_per_condition is not None:
        held = max((c.filled for c in slots.condition_counts([study])[study.pk]), default=0)
        if workers_per_condition < held:
            raise ValidationError(
                {"workers_per_condition": f"A condition already holds {held} workers; cannot lower N below that."}
            )
    if (
        pilot_workers_per_condition is not None
        and study.rest_opened_at is not None
        and pilot_workers_per_condition != study.pilot_workers_per_condition
    ):
        raise ValidationError(
            {"pilot_workers_per_condition": "The rest is open: the pilot's share is its record now and stays."}
        )
    if pilot_workers_per_condition is not None and study.in_pilot:
        held = max((c.filled for c in slots.condition_counts([study])[study.pk]), default=0)
        if pilot_workers_per_condition < held:
            raise ValidationError(
                {
                    "pilot_workers_per_condition": f"The pilot is running and a condition already holds {held} "
                    "workers; cannot lower its share below that."
                }
            )


def set_conditions(*, study: Study, shots: Iterable[int], actor: audit.Actor = None) -> list[Condition]:
    """Make the study's conditions exactly these shot levels, bound to its split's training sets."""
    wanted = sorted(set(shots))
    validate_change(study=study, shots=wanted)
    sets = _training_sets(task=study.task, split_number=study.split_number, shots=wanted)
    with transaction.atomic():
        had = sorted(study.conditions.values_list("shots", flat=True))
        if had != wanted:
            action = AuditEntry.Action.STUDY_CONDITIONS
            audit.record(actor=actor, action=action, study=study, before={"shots": had}, after={"shots": wanted})
        dropped = study.conditions.exclude(shots__in=wanted)
        preview.discard(study=study, conditions=dropped)  # a staff preview does not hold a condition
        dropped.delete()
        for level, training_set in sets.items():
            Condition.objects.update_or_create(study=study, shots=level, defaults={"training_set": training_set})
    return list(study.conditions.order_by("shots"))


def study_update(
    *,
    study: Study,
    split_number: int | None = None,
    shots: Iterable[int] | None = None,
    actor: audit.Actor = None,
    **options: Any,
) -> Study:
    """Change a study's settings and, while nobody has joined, its split and conditions."""
    _validated_options(options)
    with transaction.atomic():
        study = Study.objects.select_for_update().get(pk=study.pk)
        validate_change(
            study=study,
            split_number=split_number,
            shots=shots,
            workers_per_condition=options.get("workers_per_condition"),
            test_order=options.get("test_order"),
            pilot_workers_per_condition=options.get("pilot_workers_per_condition"),
        )
        codes = options.get("outcome_codes", {})
        if codes is None:  # null: no change
            options.pop("outcome_codes")
        elif isinstance(codes, dict):
            # The outcomes not named keep their codes: workers may already hold them.
            options["outcome_codes"] = {**(study.outcome_codes or {}), **codes}
        for field, value in options.items():
            setattr(study, field, value)
        if split_number is not None:
            study.split_number = split_number
        _full_clean(study)
        study_save(study=study, actor=actor)
        if shots is not None or split_number is not None:
            levels = shots if shots is not None else study.conditions.values_list("shots", flat=True)
            set_conditions(study=study, shots=list(levels), actor=actor)
    return study


def default_slug(*, task: Task, split_number: int) -> str:
    """An unused slug such as ``sst2-split1`` (``sst2-split1-2`` if taken)."""
    base = slugify(f"{task.slug}-split{split_number}")[:45]
    slug, n = base, 1
    while Study.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def create_standard_design(
    *,
    task: Task,
    split_number: int = 1,
    slug: str | None = None,
    name: str = "",
    workers_per_condition: int = STANDARD_WORKERS,
    open_now: bool = False,
    actor: audit.Actor = None,
    **options: Any,
) -> Study:
    """The CLUES design in one step: 0/10/20/30 shots, three fresh workers each, nested sets."""
    if split_number is None or not 1 <= int(split_number) <= 5:
        raise ValidationError({"split_number": "The training split is a number from 1 to 5."})
    split_number = int(split_number)
    _training_sets(task=task, split_number=split_number, shots=STANDARD_SHOTS)
    check_nested(task=task, split_number=split_number, shots=STANDARD_SHOTS)
    with transaction.atomic():
        study = study_create(
            task=task,
            slug=slug or default_slug(task=task, split_number=split_number),
            name=name or f"{task.name}, split {split_number}: 0/10/20/30 shots",
            split_number=split_number,
            shots=STANDARD_SHOTS,
            workers_per_condition=workers_per_condition,
            actor=actor,
            **options,
        )
        if open_now:
            change_status(study=study, to_status=Study.Status.OPEN, actor=actor)
    return study


def create_sampled_design(
    *,
    task: Task,
    protocol: str,
    training_set_name: str,
    training_items: int,
    test_sample_size: int,
    test_set_name: str = "",
    seed: int | None = None,
    slug: str,
    name: str = "",
    workers_per_condition: int = STANDARD_WORKERS,
    open_now: bool = False,
    actor: audit.Actor = None,
    **options: Any,
) -> Study:
    """A study of one condition whose workers train on ``training_items`` items drawn from the task's named
    set ``training_set_name`` and are tested on ``test_sample_size`` items drawn from its test set (or the
    named set ``test_set_name``: the FewCLUE README's validation set), both with ``seed`` (a new one if None)
    and recorded on the condition (FewCLUE's designs). Each set is screened first (``samples.screen``): no
    item twice, none with contradictory gold, no test item that is also in the training items' set."""
    if protocol not in Study.Protocol.values:
        raise ValidationError({"protocol": f"Unknown protocol {protocol!r}; one of {Study.Protocol.values}."})
    source = _named_set(task, training_set_name, "training_set")
    if test_set_name:
        test_set = _named_set(task, test_set_name, "test_set")
    else:
        found = samples.test_set(task.pk)
        if found is None:
            raise ValidationError({"task": f"Task {task.slug} has no test set yet: import it first."})
        test_set = found
    seed = samples.new_seed() if seed is None else seed
    training_pool = samples.screened(source.pk).kept
    test_pool = samples.screened(test_set.pk, training_set_id=source.pk).kept
    training = samples.draw(training_pool, training_items, seed=seed, stream="training_sample")
    test = samples.draw(test_pool, test_sample_size, seed=seed, stream="test_sample")
    study = Study(
        task=task,
        slug=slug,
        name=name or f"{task.name}: {training_items} training items of {training_set_name}, {test_sample_size} test",
        protocol=protocol,
        test_sample_size=test_sample_size,
        workers_per_condition=workers_per_condition,
        **_validated_options(options),
    )
    _full_clean(study)
    try:
        with transaction.atomic():
            study_save(study=study, actor=actor)
            Condition.objects.create(
                study=study,
                shots=training_items,
                training_set=source,
                sample_seed=seed,
                training_sample=training,
                test_set=test_set,
                test_sample=test,
            )
            if open_now:
                change_status(study=study, to_status=Study.Status.OPEN, actor=actor)
    except IntegrityError:
        raise ValidationError({"slug": f"A study with slug {slug!r} already exists."}) from None
    return study


def _named_set(task: Task, name: str, field: str) -> ExampleSet:
    found = ExampleSet.objects.filter(task=task, role=ExampleSet.Role.NAMED, name=name).first()
    if found is None:
        raise ValidationError({field: f"Task {task.slug} has no set named {name!r}."})
    return found


def study_delete(*, study: Study, actor: audit.Actor = None) -> None:
    """Delete a study nobody has joined (afterwards, close it instead)."""
    if _has_participants(study):
        raise ValidationError({"status": "Workers have joined this study: close it instead of deleting it."})
    with transaction.atomic():
        before = audit.snapshot(study, settings_fields()) | {"status": study.status}
        audit.record(actor=actor, action=AuditEntry.Action.STUDY_DELETE, study=study, before=before)
        preview.discard(study=study)
        examples = list(study.attention_checks.values_list("example_id", flat=True))
        study.delete()
        Example.objects.filter(pk__in=examples).delete()  # the checks' own examples, in no set


# --- Status ---------------------------------------------------------------------------


# Called with the study after each change of its status. A higher capability that follows it (the Prolific
# places) registers here, once, at start-up (AnnotationConfig.ready), as with lifecycle.on_slot_change.
_status_listeners: list[Callable[[Study], None]] = []


def on_status_change(listener: Callable[[Study], None]) -> None:
    """Register ``listener`` to hear of every change of a study's status (idempotent)."""
    if listener not in _status_listeners:
        _status_listeners.append(listener)


# The audit trail's name for each change of status: (from, to) -> action.
_STATUS_ACTIONS: dict[tuple[str, str], str] = {
    (Study.Status.DRAFT, Study.Status.OPEN): AuditEntry.Action.STUDY_OPEN,
    (Study.Status.PAUSED, Study.Status.OPEN): AuditEntry.Action.STUDY_REOPEN,
}


def change_status(
    *,
    study: Study,
    to_status: str,
    grace_minutes: int | None = None,
    pilot: bool = False,
    rest: bool = False,
    actor: audit.Actor = None,
    detail: dict[str, Any] | None = None,
) -> Study:
    """draft → open ⇄ paused → closed (closed is final); opening checks the study can run.

    Pausing refuses new entries only: the workers already in carry on. Closing refuses new entries too
    and gives the workers already in ``grace_minutes`` (default ``closing.DEFAULT_GRACE_MINUTES``, 0 for
    none) to finish: the study's ``closes_at``, after which their work is refused (``services.admission.closing``).

    A pilot launch: ``pilot`` opens a draft with only its pilot share of each condition's slots
    (``pilot_workers_per_condition``, ``slots.open_slots``); ``rest`` opens the rest of a study in its pilot
    (open or paused), which opens it too. Pausing and reopening a pilot keep it a pilot.
    The audit trail gets the status (and ``closes_at``) before and after, with ``detail``.
    """
    if to_status not in Study.Status.values:
        raise ValidationError({"status": f"Unknown status {to_status!r}; one of {Study.Status.values}."})
    if grace_minutes is not None and to_status != Study.Status.CLOSED:
        raise ValidationError({"grace_minutes": "A grace period is given only when closing a study."})
    if (pilot or rest) and to_status != Study.Status.OPEN:
        raise ValidationError({"status": "A pilot, or the rest after it, is opened: the status goes to open."})
    if pilot and rest:
        raise ValidationError({"status": "Open a study as a pilot, or open the rest of its pilot: not both at once."})
    if to_status == Study.Status.CLOSED:
        grace_minutes = _checked_grace(grace_minutes)
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        changes: dict[str, Any] = {}
        if pilot:
            _check_pilot(locked)
            changes["pilot_opened_at"] = timezone.now()
        if rest:
            _check_rest(locked)
            changes["rest_opened_at"] = timezone.now()
        if to_status == locked.status and not changes:
            return locked
        if to_status != locked.status and to_status not in STATUS_TRANSITIONS[locked.status]:
            raise ValidationError({"status": f"A {locked.status} study cannot become {to_status}."})
        if to_status == Study.Status.OPEN and to_status != locked.status:
            shots = list(locked.conditions.values_list("shots", flat=True))
            if not shots:
                raise ValidationError({"status": "A study without conditions cannot open: add at least one."})
            if locked.test_sample_size is None:  # a sampled study's items were checked when they were drawn
                _training_sets(task=locked.task, split_number=locked.split_number, shots=shots)
            _check_task_has_test_set(locked.task)
            _check_task_texts(locked)
        changes["status"] = to_status
        if to_status == Study.Status.CLOSED:
            changes["closes_at"] = timezone.now() + timedelta(minutes=grace_minutes or 0)
        Study.objects.filter(pk=locked.pk).update(**changes)
        by_status: dict[str, str] = {
            Study.Status.PAUSED: AuditEntry.Action.STUDY_PAUSE,
            Study.Status.CLOSED: AuditEntry.Action.STUDY_CLOSE,
        }
        action: str
        if pilot or rest:
            action = AuditEntry.Action.STUDY_OPEN_PILOT if pilot else AuditEntry.Action.STUDY_OPEN_REST
        else:
            action = _STATUS_ACTIONS.get((locked.status, to_status)) or by_status[to_status]
        before = {"status": locked.status} | {
            f: getattr(locked, f) for f in ("closes_at", "rest_opened_at") if f in changes
        }
        audit.record(actor=actor, action=action, study=locked, before=before, after=changes, detail=detail)
    for field, value in changes.items():
        setattr(study, field, value)
    for listener in _status_listeners:
        listener(study)
    return study


def _check_pilot(study: Study) -> None:
    """A pilot is how a draft is launched, with a share of the design's slots set beforehand."""
    if study.status != Study.Status.DRAFT:
        raise ValidationError(
            {"status": f"Only a draft study opens as a pilot; {study.slug} is {study.status} (a pilot is its launch)."}
        )
    share, design = study.pilot_workers_per_condition, study.workers_per_condition
    if not share:
        raise ValidationError(
            {
                "pilot_workers_per_condition": f"{study.slug} has no pilot share: set it first, e.g. manage.py "
                f"configure_study {study.slug} --pilot-workers-per-condition 1."
            }
        )
    if share > design:  # the model's check and the database's too; said here for a row written around them
        raise ValidationError(
            {"pilot_workers_per_condition": f"The pilot's share ({share}) is above the design's {design} workers."}
        )


def _check_rest(study: Study) -> None:
    """Only a running pilot (open or paused) has a rest to open."""
    if not study.in_pilot:
        said = "its rest is already open" if study.rest_opened_at else "it was not opened as a pilot"
        raise ValidationError({"status": f"{study.slug} is not in a pilot ({said}): there is no rest to open."})
    if study.status == Study.Status.CLOSED:
        raise ValidationError({"status": f"{study.slug} is closed (final): its rest can no longer open."})


def _check_task_texts(study: Study) -> None:
    """A study in a fixed language opens only when its workers read the task in that language throughout."""
    missing = languages.missing_task_texts(study)
    if missing:
        shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
        raise ValidationError(
            {
                "status": f"The task {study.task.slug!r} lacks texts in {study.language!r}, so workers would read "
                f"English there: {shown}. Add them in the admin (the task's page, Texts in …) and open again."
            }
        )


def _checked_grace(grace_minutes: Any) -> int:
    if grace_minutes is None:
        return closing.DEFAULT_GRACE_MINUTES
    if isinstance(grace_minutes, bool) or not isinstance(grace_minutes, int):
        raise ValidationError({"grace_minutes": "The grace period is a whole number of minutes."})
    if not 0 <= grace_minutes <= closing.MAX_GRACE_MINUTES:
        raise ValidationError(
            {"grace_minutes": f"The grace period is from 0 to {closing.MAX_GRACE_MINUTES} minutes (a week)."}
        )
    return grace_minutes
