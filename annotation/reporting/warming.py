"""A study page's kept figures computed again off the request, after a completed worker's data changes.

A completion, or an exclusion or readmission of a worker who had completed, changes the figures a study
page keeps (``page_figures``: the table, the analyses of the completed workers, the pay and per-worker
lines), and the first view after it computes them again: a few hundred milliseconds to a second for a
span study of a whole replication. With a Celery worker and a cache the web processes share
(``CACHE_URL``), that computation is queued after the change commits and done by the worker, so that
staff find the figures kept; the keys are those the page derives (``figure_keys``), so a view that comes
first computes them itself and nothing stale can be served. Without a worker (Celery eager, the embedded
default) or with each process's own memory as its cache, nothing is queued: it would run in the worker's
own request, or fill a cache no page reads.
"""

from __future__ import annotations

from functools import partial

from django.conf import settings
from django.db import transaction

from annotation.celery import app as celery_app
from annotation.models import Participation, Study
from annotation.reporting import page_figures
from annotation.reporting.options import MetricOptions

WARM_TASK = "annotation.warm_study_figures"


def enabled() -> bool:
    """A worker computes them (Celery not eager) into a cache every web process reads (``CACHE_URL``)."""
    return not settings.CELERY_TASK_ALWAYS_EAGER and bool(getattr(settings, "CACHE_URL", None))


def on_finished_change(participation: Participation) -> None:
    """A completed worker's data changed (``lifecycle.on_finished_change``): queue the study's figures."""
    if enabled():
        # robust: a broker that is down costs the next view its computation, never the worker their answer.
        transaction.on_commit(partial(_send, participation.study_id), robust=True)


def _send(study_pk: int) -> None:
    celery_app.loader.import_default_modules()
    celery_app.tasks[WARM_TASK].delay(study_pk)


def warm(study_id: int) -> bool:
    """Compute and keep what the study's page keeps, with the page's default options; False if no such study."""
    study = Study.objects.select_related("task").filter(pk=study_id).first()
    if study is None:
        return False
    page_figures.study_page(study, MetricOptions())
    return True
