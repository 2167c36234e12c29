"""After a completion, a Celery worker computes a study page's kept figures (annotation.reporting.warming)."""

from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from annotation.models import Participation, Study
from annotation.reporting import warming
from annotation.services.state import lifecycle
from annotation.services.verdicts import overrides
from tests.reporting.builders import add_annotator, gold_answers, make_study

pytestmark = pytest.mark.django_db
State = Participation.State
WITH_A_WORKER = {"CELERY_TASK_ALWAYS_EAGER": False, "CACHE_URL": "redis://127.0.0.1:6379/9"}


@pytest.fixture
def study(sst2):
    study = make_study(sst2, shots=(0,), slug="warmed", base_reward=Decimal("1.00"))
    for n in range(2):
        add_annotator(study, 0, answers=gold_answers(sst2), worker_id=f"w{n}")
    return study


@pytest.fixture
def sent(monkeypatch):
    """The study ids queued for the worker (the broker itself is the Celery integration tests')."""
    queued: list[int] = []
    monkeypatch.setattr(warming, "_send", queued.append)
    return queued


def test_a_completion_an_exclusion_and_a_readmission_queue_the_study_with_a_worker_and_a_shared_cache(
    study, sent, django_capture_on_commit_callbacks
):
    at_work = add_annotator(study, 0, answers=[], state=State.TEST, worker_id="at-work")
    done = Participation.objects.get(worker__external_id="w0")
    with override_settings(**WITH_A_WORKER), django_capture_on_commit_callbacks(execute=True):
        lifecycle.transition(at_work, to_state=State.COMPLETED)
        overrides.override(done, admit=False, reason="copied", actor=None)
        overrides.override(done, admit=True, reason="not copied", actor=None)
    # The completion; the completed worker's exclusion; the readmission, which completes them again.
    assert sent == [study.pk, study.pk, study.pk]


def test_nothing_is_queued_for_other_changes_or_without_a_worker_or_a_shared_cache(
    study, sent, django_capture_on_commit_callbacks
):
    claimed = add_annotator(study, 0, answers=[], state=State.CLAIMED, worker_id="new")
    with override_settings(**WITH_A_WORKER), django_capture_on_commit_callbacks(execute=True):
        lifecycle.transition(claimed, to_state=State.TEST)  # a step begun: no completed worker's data changed
    at_work = Participation.objects.get(pk=claimed.pk)
    for changed in ({"CELERY_TASK_ALWAYS_EAGER": True}, {"CELERY_TASK_ALWAYS_EAGER": False, "CACHE_URL": None}):
        with override_settings(**changed):
            assert not warming.enabled()
    with django_capture_on_commit_callbacks(execute=True):  # the tests' settings: Celery eager
        lifecycle.transition(at_work, to_state=State.COMPLETED)
    assert sent == []


def test_the_task_is_registered_under_the_name_the_queue_sends(study):
    from annotation.celery import app

    app.loader.import_default_modules()
    assert app.tasks[warming.WARM_TASK].name == warming.WARM_TASK


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        assert client.get(url).status_code == 200
    return len(captured.captured_queries)


def test_the_warmed_figures_are_what_the_page_serves_kept(client, study):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    url = f"/dashboard/study/{study.slug}/"
    _queries(client, url)
    kept = _queries(client, url)  # what a view of kept figures costs
    add_annotator(study, 0, answers=gold_answers(study.task), worker_id="w2")  # a new completion
    cache.clear()
    assert warming.warm(study.pk)
    assert _queries(client, url) == kept  # the page computes nothing the worker computed
    assert not warming.warm(study.pk + 1000)


# --- with a real worker (CELERY_INTEGRATION=1, PostgreSQL) ------------------------------------------------


@pytest.mark.celery_worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_keeps_the_figures_after_a_completion(celery_worker_process, client, sst2):
    import time

    from annotation.reporting import page_figures
    from annotation.reporting.figure_cache import is_kept
    from annotation.reporting.figure_keys import study_keys
    from annotation.reporting.options import MetricOptions
    from tests.conftest import worker_cache_url

    url = worker_cache_url()
    shared = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    with override_settings(CACHE_URL=url, CACHES=shared):
        cache.clear()
        study = make_study(sst2, shots=(0,), slug="warmed-live", base_reward=Decimal("1.00"))
        for n in range(2):
            add_annotator(study, 0, answers=gold_answers(sst2), worker_id=f"w{n}")
        User.objects.create_superuser("boss", "boss@example.org", "pw")
        client.login(username="boss", password="pw")
        page = f"/dashboard/study/{study.slug}/"
        _queries(client, page)
        kept = _queries(client, page)
        at_work = add_annotator(study, 0, answers=gold_answers(sst2), state=State.TEST, worker_id="w2")
        lifecycle.transition(at_work, to_state=State.COMPLETED)  # autocommit: queued at once
        study = Study.objects.select_related("task").get(pk=study.pk)  # as the page and the worker read it
        key = page_figures.analyses_key(study, study_keys([study]), MetricOptions())
        deadline = time.monotonic() + 60
        while not is_kept(page_figures.ANALYSES, key):  # kept by the worker, not by a view
            assert time.monotonic() < deadline, "the worker did not keep the study's analyses within 60 s"
            assert celery_worker_process.poll() is None
            time.sleep(0.1)
        assert _queries(client, page) == kept
        cache.clear()
