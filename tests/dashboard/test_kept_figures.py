"""The dashboard keeps its figures between views, and never serves them stale.

Each test views the overview and a study page (the figures are computed and kept), makes one write
the way the application makes it (an answer, a heartbeat, an exclusion, a readmission, a withdrawal,
re-derived scores), views them again, and compares what they show with a recomputation: the same
pages with the cache emptied, so that nothing kept is used. The write must also have changed
something, or the comparison would prove nothing.
"""

import dataclasses
from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from annotation.models import Condition, Participation, Response
from annotation.reporting.recompute import recompute_item_scores
from annotation.reporting.tables import Table
from annotation.services.rights import withdrawal
from annotation.services.session import answers, steps, timing
from annotation.services.verdicts import overrides
from tests.reporting.builders import add_annotator, gold_answers, make_study, wrong
from tests.reporting.test_fewclue_table import _work, fewclue  # noqa: F401  (a fixture)

pytestmark = pytest.mark.django_db
State = Participation.State


def _plain(value):
    """A page's figure as comparable data: a table as its export's dict, other dataclasses as dicts."""
    if isinstance(value, Table):
        return value.as_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


STUDY_FIGURES = (
    "table",
    "annotators",
    "conditions",
    "notices",
    "aggregation",
    "task_alpha",
    "overlaps",
    "hardest",
    "confidence",
    "timing",
    "pay",
    "attention",
    "integrity",
)


def _shown(client, study) -> dict:
    page = client.get(f"/dashboard/study/{study.slug}/")
    overview = client.get("/dashboard/")
    assert page.status_code == overview.status_code == 200
    shown = {name: _plain(page.context[name]) for name in STUDY_FIGURES}
    shown["overview table"] = _plain(overview.context["table"])
    shown["overview cards"] = [(_plain(c["conditions"]), _plain(c["notices"])) for c in overview.context["overview"]]
    return shown


def _recomputed(client, study) -> dict:
    cache.clear()
    return _shown(client, study)


@pytest.fixture
def staff(client):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


@pytest.fixture
def study(sst2):
    """Two conditions, three completed workers in each, each a little different."""
    study = make_study(sst2, shots=(0, 10), slug="kept", base_reward=Decimal("1.00"))
    gold = gold_answers(sst2)
    for shots in (0, 10):
        for n in range(3):
            answers_ = [wrong(g, sst2) if i == n else g for i, g in enumerate(gold)]
            add_annotator(study, shots, answers=answers_, worker_id=f"w{shots}-{n}", confidence=2 + n)
    return study


def _kept_then_changed(client, study, write) -> None:
    before = _shown(client, study)
    assert _shown(client, study) == before  # served kept: the same
    write()
    after = _shown(client, study)
    assert after == _recomputed(client, study)  # never stale
    assert after != before  # and the write did change what the pages show


def test_an_answer_and_the_completion_it_brings_show_at_once(staff, study):
    p = add_annotator(study, 0, answers=[], state=State.TEST, worker_id="at-work")
    steps.lay_out_current(participation=p)
    gold = gold_answers(study.task)

    def answer() -> None:
        item = steps.current_item(participation=p)
        answers.submit(participation=p, item_id=item.pk, label=item.example.gold_answers[0], confidence=3)

    _kept_then_changed(staff, study, answer)  # one answer: the worker's line changes
    for _ in gold[2:]:
        answer()
    _kept_then_changed(staff, study, answer)  # the last: completed, in the table now
    p.refresh_from_db()
    assert p.state == State.COMPLETED


def test_a_heartbeat_s_time_shows_at_once(staff, study):
    p = add_annotator(study, 0, answers=[], state=State.TEST, worker_id="at-work")
    steps.lay_out_current(participation=p)
    item = steps.current_item(participation=p)
    shown = timezone.now() - timedelta(seconds=20)
    Response.all_objects.filter(pk=item.pk).update(shown_at=shown, last_seen_at=shown)
    item.refresh_from_db()
    _kept_then_changed(staff, study, lambda: timing.record_event(participation=p, response=item, kind="heartbeat"))


def test_an_exclusion_and_a_readmission_show_at_once(staff, study):
    p = Participation.objects.get(worker__external_id="w0-1")
    _kept_then_changed(staff, study, lambda: overrides.override(p, admit=False, reason="copied", actor=None))
    _kept_then_changed(staff, study, lambda: overrides.override(p, admit=True, reason="not copied", actor=None))
    p.refresh_from_db()
    assert p.state == State.COMPLETED


def test_a_withdrawal_shows_at_once(staff, study):
    _kept_then_changed(
        staff, study, lambda: withdrawal.withdraw(platform="prolific", external_id="w10-2", run_by="test")
    )
    assert not Participation.objects.filter(worker__external_id="w10-2").exists()


def test_scores_derived_again_show_at_once(staff, study):
    # A stored score that disagrees with the scorer (as after a change of the scorer): the pages show it...
    wrongly = Response.objects.filter(participation__worker__external_id="w0-0", score=1.0).first()
    Response.objects.filter(pk=wrongly.pk).update(score=0.0)
    # ... until the scores are derived again, in place (no row added, locked or removed).
    _kept_then_changed(staff, study, lambda: recompute_item_scores(study_ids=[study.pk], fix=True))


def test_no_worker_identifier_is_kept_in_the_cache(staff, study):
    _shown(staff, study)
    kept = list(cache._cache.values())  # the local-memory cache's own store: each value pickled
    assert kept and not any(b"w0-1" in value or b"w10-2" in value for value in kept)
    # The pages show them all the same.
    assert "w0-1" in staff.get(f"/dashboard/study/{study.slug}/").content.decode()


def test_a_write_to_one_of_two_pooled_studies_shows_in_the_overview_at_once(staff, study, sst2):
    # A second study of the same task: the overview's cells pool both, and each study's part is kept apart.
    other = make_study(sst2, shots=(0, 10), slug="kept-too", base_reward=Decimal("1.00"))
    for shots in (0, 10):
        add_annotator(other, shots, answers=[wrong(g, sst2) for g in gold_answers(sst2)], worker_id=f"o{shots}")
    p = Participation.objects.get(worker__external_id="o10")
    _kept_then_changed(staff, other, lambda: overrides.override(p, admit=False, reason="copied", actor=None))


@pytest.mark.usefixtures("fewclue")
def test_a_fewclue_worker_s_answers_show_in_the_fewclue_table_at_once(staff):
    call_command(
        "create_fewclue_studies",
        *("--training-items", "2", "--test-sample", "2", "--tasks", "ocnli", "--seed", "1"),
        *("--open", "--posted-reward", "1.50"),
        stdout=StringIO(),
    )
    condition = Condition.objects.get(study__slug="fewclue-ocnli-paper")
    gold = [condition.study.task.examples.get(pk=pk).gold_answers[0] for pk in condition.test_sample]
    _work("a", "fewclue-ocnli-paper", gold)

    def table() -> dict:
        return _plain(staff.get("/dashboard/").context["fewclue_table"])

    before = table()
    assert table() == before  # served kept
    _work("b", "fewclue-ocnli-paper", [None, gold[1]])  # a second worker: a skip and the gold
    after = table()
    cache.clear()
    assert after == table() != before
