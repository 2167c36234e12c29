"""What a rehearsal does inside its scratch database: each step runs in a ``manage.py rehearsal_step``
process whose DATABASE_URL is the scratch database, and refuses any other (REHEARSAL_SCRATCH_DB).

The steps call the application's own services, as the server, the Celery beat and the admin would:
``prepare`` loads the copied design and opens it, ``sweep`` runs what the Celery beat runs (the close-out
after a grace period, the abandonment sweep, the training filter's due group verdicts), ``close`` closes
the study with the default grace period, ``prolific`` runs a Prolific operation against the stand-in,
``check`` checks the invariants.
"""

from __future__ import annotations

import os
import secrets
from decimal import Decimal
from typing import Any

from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection, transaction

from annotation.models import Participation, Study
from annotation.protocol import roles
from annotation.reporting.scores import annotator_rows
from annotation.services.admission import abandonment, closing
from annotation.services.studies import studies
from annotation.services.verdicts import filter_groups
from tasks_app.models import Task

GUARD = "REHEARSAL_SCRATCH_DB"
REPLY = "@rehearsal-step "  # what starts a step's answer on ``rehearsal_step serve``'s stdout


class NotScratch(Exception):
    pass


def check_scratch() -> None:
    """Refuse to run anywhere but the scratch database the rehearsal made."""
    expected = os.environ.get(GUARD, "")
    if not expected or str(connection.settings_dict["NAME"]) != expected:
        raise NotScratch(
            f"rehearsal steps run only on the rehearsal's scratch database ({GUARD}={expected!r}, "
            f"this database is {connection.settings_dict['NAME']!r})"
        )


def prepare(*, fixture: str, slug: str, workers_per_condition: int | None, second_slug: str) -> dict[str, Any]:
    """Load the design, open the study (N workers per condition if given), and a second study of the same
    task (the same conditions) for the worker who tries a second condition of the task."""
    # The fresh database's migrations may have seeded the catalog's tasks (other ids, same slugs): the copy
    # replaces them.
    Task.objects.all().delete()
    call_command("loaddata", fixture, verbosity=0)
    study = Study.objects.get(slug=slug)
    # The copy rehearses the whole design at once: a pilot of the real study (its share, its dates) is not copied.
    changes: dict[str, Any] = {
        "status": Study.Status.DRAFT,
        "closes_at": None,
        "pilot_workers_per_condition": None,
        "pilot_opened_at": None,
        "rest_opened_at": None,
    }
    if workers_per_condition:
        changes["workers_per_condition"] = workers_per_condition
    assumed = {}
    if study.base_reward is None:
        # The pay rule needs the posted reward; the launch check names it as missing, once, with the command
        # that sets it. The copy runs as if none was posted: all the pay a bonus.
        changes["base_reward"] = Decimal("0.00")
        assumed["base_reward"] = "0.00 (no posted reward: all the pay as a bonus)"
    Study.objects.filter(pk=study.pk).update(**changes)
    study.refresh_from_db()
    studies.change_status(study=study, to_status=Study.Status.OPEN, actor="rehearsal")
    with transaction.atomic():
        second = Study.objects.get(pk=study.pk)
        conditions = list(second.conditions.all())
        second.pk = None
        second.slug = second_slug
        second.name = f"{study.name} (second study of the task)"
        second.status = Study.Status.DRAFT
        second.save()
        for condition in conditions:
            condition.pk = None
            condition.study = second
            condition.save()
    studies.change_status(study=second, to_status=Study.Status.OPEN, actor="rehearsal")
    study.refresh_from_db()
    # A team member's account on the scratch database only, for the staff preview: an assistant, the least
    # role that may preview (docs/team.md).
    password = secrets.token_urlsafe(16)
    staff = get_user_model().objects.create_user(username="rehearsal-staff", password=password, is_staff=True)
    roles.sync_groups(apps)
    staff.groups.add(Group.objects.get(name=roles.GROUP_NAMES[roles.ASSISTANT]))
    return {
        "staff": {"username": "rehearsal-staff", "password": password},
        "study": study.slug,
        "second": second.slug,
        "shots": list(study.conditions.order_by("shots").values_list("shots", flat=True)),
        "workers_per_condition": study.workers_per_condition,
        "abandon_after_minutes": study.abandon_after_minutes,
        "filter_group_timeout_minutes": study.filter_group_timeout_minutes,
        "assumed": assumed,
    }


def sweep(*, slug: str) -> dict[str, Any]:
    """What the Celery beat runs, at the rehearsal clock's time (the rehearsal moves it past the limits first):
    the close-out of a closed study's workers after its grace period, the abandonment sweep, the relative
    training filter's group verdicts that are due."""
    study = Study.objects.get(slug=slug)
    closed_out = closing.close_out_expired()
    released = abandonment.release_abandoned(study=study)
    decided = filter_groups.decide_due(study=study)
    return {"released": released, "closed_out": closed_out, "decided": len(decided)}


def close(*, slug: str) -> dict[str, Any]:
    """Close the study as staff do, with the default grace period (the rehearsal moves the clock past it)."""
    study = studies.change_status(study=Study.objects.get(slug=slug), to_status=Study.Status.CLOSED, actor="rehearsal")
    return {"status": study.status, "grace_minutes": closing.DEFAULT_GRACE_MINUTES}


# What a researcher does on Prolific after the study, in order: each a dry run, then the run; the bonus
# twice (a second run must pay nobody again).
PROLIFIC_RUNS = [
    ("review_dry_run", "review", False),
    ("review", "review", True),
    ("bonus_dry_run", "bonus", False),
    ("bonus", "bonus", True),
    ("bonus_again", "bonus", True),
    ("group_dry_run", "group", False),
    ("group", "group", True),
]


def prolific(*, slug: str) -> dict[str, Any]:
    """The Prolific operations on the study (PROLIFIC_API_URL: the stand-in), as ``manage.py prolific`` runs them."""
    from annotation.services.prolific import operations

    study = Study.objects.select_related("task").get(slug=slug)
    reports: dict[str, Any] = {}
    for name, operation, run in PROLIFIC_RUNS:
        try:
            if run:
                report = operations.run(operation=operation, study=study, actor="rehearsal")
            else:
                report = operations.plan(operation=operation, study=study, actor="rehearsal")
        except Exception as exc:  # reported as it is: the invariants then say what it left undone
            reports[name] = {"operation": operation, "dry_run": not run, "error": f"{type(exc).__name__}: {exc}"}
        else:
            reports[name] = report.as_dict()
    return reports


def check(*, slug: str, facts: dict[str, Any]) -> dict[str, Any]:
    """Every invariant's result, and each participation's state as the database ends it, by
    ``end_state_key`` (a worker's last page can say less: it may never have loaded the end page)."""
    from annotation.rehearsal import invariants

    study = Study.objects.select_related("task").get(slug=slug)
    results = [result.as_dict() for result in invariants.check_all(study=study, facts=facts)]
    ends = Participation.objects.filter(study__task=study.task).values_list(
        "study__slug", "worker__external_id", "state"
    )
    # Each worker's test S1 as the app scores it (0..1; skips under the default policy), for the report to
    # set beside the accuracy the worker was simulated with.
    measured = {
        end_state_key(row.study_slug, row.worker_id): row.test_s1
        for row in annotator_rows(studies=[study])
        if row.test_s1 is not None
    }
    return {
        "invariants": results,
        "end_states": {end_state_key(s, w): state for s, w, state in ends},
        "measured": measured,
    }


def end_state_key(study: str, worker_id: str) -> str:
    return f"{study} {worker_id}"
