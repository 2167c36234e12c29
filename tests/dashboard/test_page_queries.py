"""The dashboard's pages run as many queries for three workers a condition as for one (no per-worker query).

Not timed (bench/dashboard.py measures the time): the SQL statements of the
overview and of a study page are counted with one completed worker in each
condition, then with three, on a classification study (four conditions) and
a span study beside it; every page must run exactly as many statements
both times, and no more than its ceiling.
"""

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.factories import make_span_task
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong

# Today's counts (SQLite: overview 28 for these two studies, a study page 65, a span study's 48) with room
# for a few more; the equality below is what keeps per-worker queries out.
CEILING = {"overview": 40, "study": 80}


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured.captured_queries)


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
    one = {name: _queries(client, url) for name, url in pages.items()}
    _add_workers(classification, span)
    _add_workers(classification, span)
    assert classification.participations.count() == 12 and span.participations.count() == 3
    three = {name: _queries(client, url) for name, url in pages.items()}
    assert three == one
    for name, count in three.items():
        assert count <= CEILING[name.split()[-1]], (name, count)
