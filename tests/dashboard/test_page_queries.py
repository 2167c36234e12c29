"""The dashboard's pages run as many queries for three workers a condition as for one (no per-worker query).

Not timed (bench/dashboard.py measures the time): the SQL statements of the
overview and of a study page are counted with one completed worker in each
condition, then with three, on a classification study (four conditions) and
a span study beside it; every page must run exactly as many statements
both times, and no more than its ceiling. Each page is counted twice: when it
computes its figures (the first view after a write) and when it serves them
kept (the next view, annotation.reporting.page_figures).
"""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

# Today's counts (SQLite): computing, the overview 34 for these two studies, then a study page 68 and a span
# study's 49 (what the overview read of each study is kept per study); served kept, 15, 20 and 20. The
# figures' keys and the workers' identities are read on top of the figures. Each with room for a few more;
# the equality below is what keeps per-worker queries out.
CEILING = {"overview": 40, "study": 75}
KEPT_CEILING = {"overview": 20, "study": 25}


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured.captured_queries)


def _computed_then_kept(client, url: str) -> tuple[int, int]:
    return _queries(client, url), _queries(client, url)


def _add_workers(classification, span) -> None:
    gold = gold_answers(classification.task)
    for shots in (0, 10, 20, 30):
        answers = [wrong(g, classification.task) if i % 3 == 0 else g for i, g in enumerate(gold)]
        answers[-1] = None  # a skip
        add_annotator(classification, shots, answers=answers, confidence=2 + shots // 10)
    add_annotator(span, 0, answers=[g[:1] for g in gold_answers(span.task)])


@pytest.mark.django_db
def test_pages_run_as_many_queries_for_three_workers_as_for_one(client, sst2):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    classification = make_study(sst2, slug="queries-sst2")
    span = make_study(make_span_task(slug="queries-conll"), shots=(0,), slug="queries-conll")
    pages = {
        "overview": "/dashboard/",
        "study": f"/dashboard/study/{classification.slug}/",
        "span study": f"/dashboard/study/{span.slug}/",
    }
    _add_workers(classification, span)
    _queries(client, pages["overview"])  # the first request warms what is read once per process
    cache.clear()  # every figure computed again
    one = {name: _computed_then_kept(client, url) for name, url in pages.items()}
    _add_workers(classification, span)  # new rows: every page's key changes, and its figures are computed
    _add_workers(classification, span)
    assert classification.participations.count() == 12 and span.participations.count() == 3
    three = {name: _computed_then_kept(client, url) for name, url in pages.items()}
    assert three == one
    for name, (computed, kept) in three.items():
        assert computed <= CEILING[name.split()[-1]], (name, computed)
        assert kept <= KEPT_CEILING[name.split()[-1]], (name, kept)
        assert kept < computed, name
