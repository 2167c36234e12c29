"""Laying out a worker's step (training or test) and finding where they are in it.

A step is laid out once, as ``pending`` Response rows in the order the worker
will see: the condition's training set (or sample) in its order, or the task's test
set (or the condition's test sample, services.session.samples) in the study's order
(fixed, or shuffled per worker with a seed recorded on the participation).
The current item is always the first pending row by position, so the order
cannot be changed by the client.

Laying out is idempotent and safe under concurrency: the seed is set by a
conditional UPDATE, the shuffle is determined by the seed, and the rows are
bulk-inserted ignoring the unique (participation, phase, position) conflicts
of a racing request.

A worker request starts from ``read_worker_state`` (one statement): its
``step`` is where the worker was in their step when the request began, which
the functions here take as ``known`` until the request writes something.
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from django.db.models import Count, Q
from django.utils.translation import gettext

from annotation.errors import ServiceError
from annotation.models import Participation, Response, Study
from annotation.protocol.states import PHASE_OF_STATE
from annotation.services.session import samples, worker_sql
from annotation.services.session.worker_sql import StepHead, WorkerState
from annotation.services.verdicts import attention

State = Participation.State
Phase = Response.Phase


class StepUnavailable(ServiceError):
    """The participation is not in a state with a step, or its step has no items."""

    code = "step_unavailable"
    status = 409


@dataclass(frozen=True)
class Progress:
    phase: str
    done: int
    total: int

    @property
    def number(self) -> int:
        """1-based number of the current item (``total`` once everything is done)."""
        return min(self.done + 1, self.total)

    def as_dict(self) -> dict:
        word = "Training item" if self.phase == Phase.TRAINING else "Item"
        return {
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "number": self.number,
            "finished": self.done >= self.total,
            "text": f"{word} {self.number} of {self.total}",
        }


def phase_for(participation: Participation) -> str | None:
    """The phase the participation is working in, or None outside training/test."""
    return PHASE_OF_STATE.get(participation.state)


def read_worker_state(participation_id: int) -> WorkerState | None:
    """The participation as a worker request starts from it (one statement), or None if there is none."""
    return worker_sql.worker_state(participation_id, PHASE_OF_STATE)


def _test_example_ids(participation: Participation) -> list[int]:
    """The condition's test items (its sample, or the whole test set), in the study's order."""
    set_id = samples.test_set_id(participation.task_id)
    if set_id is None:
        raise StepUnavailable(gettext("task %(task)s has no test set") % {"task": participation.task_id})
    ids = samples.test_ids(participation.condition, task_id=participation.task_id, set_id=set_id)
    if participation.study.test_order == Study.TestOrder.SHUFFLED:
        seed = _ensure_test_seed(participation)
        random.Random(seed).shuffle(ids)
    return ids


def _ensure_test_seed(participation: Participation) -> int:
    seed = participation.test_seed
    if seed is None:
        Participation.all_objects.filter(pk=participation.pk, test_seed__isnull=True).update(
            test_seed=secrets.randbits(62)
        )
        seed = Participation.all_objects.values_list("test_seed", flat=True).get(pk=participation.pk)
        assert seed is not None  # set by this UPDATE or by the racing request's
        participation.test_seed = seed
    return seed


def _training_example_ids(participation: Participation) -> list[int]:
    if participation.condition.training_set_id is None:
        raise StepUnavailable(gettext("a zero-shot condition has no training step"))
    return samples.training_ids(participation.condition)


def lay_out(*, participation: Participation, phase: str) -> int:
    """Create the pending rows of ``phase`` for this worker (no-op if they exist); return the item count."""
    existing = Response.all_objects.filter(participation=participation, phase=phase).count()
    if existing:
        return existing
    if phase == Phase.TRAINING:
        items: list[tuple[int, int | None]] = [(i, None) for i in _training_example_ids(participation)]
    else:
        # The study's attention checks take their positions among the test items (in either test order).
        test_ids = _test_example_ids(participation)
        items = (
            attention.rule.interleave(test_ids, attention.rule.checks_of(participation.study_id)) if test_ids else []
        )
    if not items:
        raise StepUnavailable(gettext("the %(step)s step has no items") % {"step": phase})
    worker_sql.insert_pending_rows(participation.pk, phase, items)
    return len(items)


def lay_out_current(*, participation: Participation) -> int:
    """Lay out the step of the participation's current state."""
    phase = phase_for(participation)
    if phase is None:
        raise StepUnavailable(gettext("a %(state)s participation has no step") % {"state": participation.state})
    return lay_out(participation=participation, phase=phase)


def step_head(*, participation: Participation, phase: str, known: StepHead | None = None) -> StepHead:
    """The first pending items of ``phase`` (the current item first), with their examples and the step's size.

    ``known`` is the step as the request read it at its start (``WorkerState.step``): it is used if it is
    of ``phase``, and only while nothing has been written since; otherwise the step is read now.
    """
    if known is not None and known.phase == phase:
        return known
    return worker_sql.step_head(participation.pk, phase)


def current_step(*, participation: Participation, known: StepHead | None = None) -> StepHead | None:
    """The head of the step the participation's state works in, laid out on first use; None outside a step."""
    phase = phase_for(participation)
    if phase is None:
        return None
    head = step_head(participation=participation, phase=phase, known=known)
    if head.current is None and not Response.all_objects.filter(participation=participation, phase=phase).exists():
        lay_out(participation=participation, phase=phase)
        head = step_head(participation=participation, phase=phase)
    return head


def current_item(*, participation: Participation) -> Response | None:
    """The worker's current item, laying the step out on first use; None when the step is done or outside one."""
    head = current_step(participation=participation)
    return head.current if head is not None else None


def progress_at(item: Response, step_size: int) -> Progress:
    """Progress when ``item`` is the current one of a step of ``step_size`` items: items are locked strictly
    in order, so the ``position`` items before it are the ones done."""
    return Progress(phase=item.phase, done=item.position, total=step_size)


def progress(*, participation: Participation, phase: str | None = None) -> Progress | None:
    """How far the worker is in a phase (the current one by default); None outside training and test."""
    phase = phase or phase_for(participation)
    if phase is None:
        return None
    return phase_progress(participation=participation, phase=phase)


def phase_progress(*, participation: Participation, phase: str) -> Progress:
    """How far the worker is in ``phase``."""
    counts = Response.all_objects.filter(participation=participation, phase=phase).aggregate(
        total=Count("id"), done=Count("id", filter=~Q(status=Response.Status.PENDING))
    )
    return Progress(phase=phase, done=counts["done"], total=counts["total"])
