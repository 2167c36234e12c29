"""At a glance: progress per condition as bar segments, the notices, the live feed, agreement in words."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import FilterDecision, Participation
from annotation.reporting.monitoring import live_payload, needs_attention, notices, progress
from tests.reporting.builders import add_annotator, gold_answers, make_study

pytestmark = pytest.mark.django_db
State = Participation.State


@pytest.fixture
def study(sst2):
    # An integrity rule: quality controls on, so that only this test's notices show.
    s = make_study(sst2, shots=(0, 10), slug="glance", status="open", abandon_after_minutes=60, integrity_max_copies=3)
    gold = gold_answers(sst2)
    add_annotator(s, 0, answers=gold, worker_id="done-1")
    add_annotator(s, 0, answers=gold[:1], state=State.TEST, worker_id="at-work")
    add_annotator(s, 10, answers=[], state=State.EXCLUDED, worker_id="out")
    return s


@pytest.fixture
def staff(client, db):
    User.objects.create_superuser("boss", "boss@example.org", "pw")
    client.login(username="boss", password="pw")
    return client


def test_progress_gives_each_condition_its_segments(study):
    zero, ten = progress([study])[study.pk]
    assert (zero.shots, zero.slots, zero.completed, zero.at_work, zero.free) == (0, 3, 1, 1, 1)
    assert (zero.completed_pct, zero.at_work_pct) == (33.33, 33.33)
    assert (ten.completed, ten.at_work, ten.free, ten.excluded) == (0, 0, 3, 1)


def test_a_slot_held_past_the_timeout_is_a_warning_and_an_idle_worker_a_note(study):
    at_work = study.participations.get(worker__external_id="at-work")
    now = timezone.now()
    Participation.objects.filter(pk=at_work.pk).update(last_activity_at=now - timedelta(minutes=40))
    assert [(n.level, n.kind) for n in notices(study, now=now)] == [("info", "idle")]
    assert "idle for over 30 minutes" in notices(study, now=now)[0].text
    Participation.objects.filter(pk=at_work.pk).update(last_activity_at=now - timedelta(minutes=61))
    stuck = notices(study, now=now)[0]
    assert (stuck.level, stuck.kind) == ("warn", "stuck") and "is Celery beat running?" in stuck.text


def test_workers_excluded_by_the_filter_are_a_warning_until_readmitted(study):
    out = study.participations.get(worker__external_id="out")
    decision = {"participation": out, "rule": "absolute", "threshold": 0.5, "reason": "r", "at": timezone.now()}
    FilterDecision.objects.create(training_s1=0.2, passed=False, **decision)
    assert any(n.kind == "excluded" and n.text.startswith("1 worker excluded") for n in notices(study))
    FilterDecision.objects.create(training_s1=0.2, passed=True, is_override=True, **decision)
    assert not any(n.kind == "excluded" for n in notices(study))


def test_a_study_whose_slots_are_all_completed_says_so(sst2):
    s = make_study(sst2, shots=(0,), slug="full", status="open", workers_per_condition=1, integrity_max_copies=3)
    add_annotator(s, 0, answers=gold_answers(sst2))
    assert [n.kind for n in notices(s)] == ["finished"]


def test_the_live_feed_is_staff_only_and_carries_progress_and_notices(client, staff, study):
    data = staff.get("/dashboard/live.json?studies=glance").json()
    (entry,) = data["studies"]
    assert entry["slug"] == "glance" and entry["status"] == "open"
    assert entry["conditions"][0]["completed"] == 1 and entry["conditions"][0]["completed_pct"] == 33.33
    assert isinstance(entry["notices"], list)
    assert staff.get("/dashboard/live.json?studies=nope").status_code == 400
    staff.logout()
    refused = client.get("/dashboard/live.json")  # JSON: the API's error shape, no redirect to a login page
    assert refused.status_code == 403 and refused.json()["error"] == "not_authenticated"


def test_live_payload_of_all_studies(study):
    assert [s["slug"] for s in live_payload([study])["studies"]] == ["glance"]


def test_agreement_says_why_it_is_missing_instead_of_a_dash(staff, study):
    page = staff.get("/dashboard/study/glance/").content.decode()
    assert "Fleiss’ κ: needs two or more completed annotators" in page
    assert "(fleiss_kappa)" not in page


def test_the_overview_puts_a_study_needing_attention_first_with_its_count(staff, study, sst2):
    calm = make_study(sst2, shots=(0,), slug="calm", status="open", abandon_after_minutes=60)
    add_annotator(calm, 0, answers=gold_answers(sst2), worker_id="calm-1")
    out = study.participations.get(worker__external_id="out")
    at = timezone.now()
    FilterDecision.objects.create(
        participation=out, rule="absolute", threshold=0.5, reason="r", at=at, training_s1=0.2, passed=False
    )
    at_work = study.participations.get(worker__external_id="at-work")
    Participation.objects.filter(pk=at_work.pk).update(last_activity_at=at - timedelta(minutes=61))
    assert needs_attention(notices(study)) == 2 and needs_attention(notices(calm)) == 0
    page = staff.get("/dashboard/?studies=calm,glance").content.decode()
    assert page.index('data-attention="glance"') < page.index('data-attention="calm"')  # sorted: attention first
    assert "2 need attention</span>" in page
    feed = staff.get("/dashboard/live.json?studies=calm,glance").json()
    assert {s["slug"]: s["needs_attention"] for s in feed["studies"]} == {"glance": 2, "calm": 0}
