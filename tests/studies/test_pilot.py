"""A pilot launch: a draft opens with its pilot share of each condition's slots, the rest opens later.

Expectations are counted here from the design (conditions × share, conditions × N), never read from the code.
"""

from collections import Counter

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from annotation.models import Participation, Study
from annotation.services.admission import entry
from annotation.services.admission.entry import Outcome
from annotation.services.state import lifecycle, slots
from annotation.services.studies import launch, studies
from annotation.services.verdicts import overrides
from tests.studies.conftest import inhouse

pytestmark = pytest.mark.django_db
State = Participation.State


def _fields(study: Study) -> tuple:
    study = Study.objects.get(pk=study.pk)
    return (
        study.status,
        study.workers_per_condition,
        study.pilot_workers_per_condition,
        study.pilot_opened_at,
        study.rest_opened_at,
    )


@pytest.fixture
def draft(make_study):
    """Two conditions (0 and 10 shots), three workers each, a pilot share of one."""
    return make_study(shots=(0, 10), workers=3, status=Study.Status.DRAFT, pilot_workers_per_condition=1)


def _join(study, n, start=0):
    return [entry.join_study(study=study, params=inhouse(f"w{i}")) for i in range(start, start + n)]


def test_a_pilot_takes_only_its_share_then_the_rest_opens_the_design(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    draft.refresh_from_db()
    assert draft.status == Study.Status.OPEN and draft.in_pilot and slots.open_slots(draft) == 1

    pilot = _join(draft, 3)
    assert [r.outcome for r in pilot] == [Outcome.JOINED, Outcome.JOINED, Outcome.FULL]  # 2 conditions × 1
    assert Counter(r.participation.condition.shots for r in pilot[:2]) == {0: 1, 10: 1}
    assert {r.participation.slot_index for r in pilot[:2]} == {0}

    studies.change_status(study=draft, to_status=Study.Status.OPEN, rest=True)
    draft.refresh_from_db()
    assert not draft.in_pilot and draft.rest_opened_at is not None and slots.open_slots(draft) == 3
    rest = _join(draft, 5, start=3)
    assert [r.outcome for r in rest] == [Outcome.JOINED] * 4 + [Outcome.FULL]  # 2 × 3 − the pilot's 2
    held = Participation.objects.filter(study=draft).values_list("condition__shots", "slot_index")
    assert sorted(held) == [(0, 0), (0, 1), (0, 2), (10, 0), (10, 1), (10, 2)]


def test_the_pilot_workers_stay_known_to_the_fresh_worker_rule(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    first = entry.join_study(study=draft, params=inhouse("alice")).participation
    lifecycle.exclude(first, reason="left", kind=Participation.ExclusionKind.ADMIN)
    studies.change_status(study=draft, to_status=Study.Status.OPEN, rest=True)
    again = entry.join_study(study=draft, params=inhouse("alice"))
    assert again.outcome != Outcome.JOINED  # back to their own page with its code, never a new slot
    assert list(Participation.objects.filter(worker__external_id="alice").values_list("state", flat=True)) == [
        State.EXCLUDED
    ]


def test_a_paused_pilot_reopens_as_a_pilot_and_the_rest_opens_it(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    studies.change_status(study=draft, to_status=Study.Status.PAUSED)
    studies.change_status(study=draft, to_status=Study.Status.OPEN)
    draft.refresh_from_db()
    assert draft.in_pilot and slots.open_slots(draft) == 1
    studies.change_status(study=draft, to_status=Study.Status.PAUSED)
    launch.open_rest(study=draft)
    draft.refresh_from_db()
    assert draft.status == Study.Status.OPEN and not draft.in_pilot


def test_the_counts_and_the_readmission_follow_the_pilot(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    a, b = (r.participation for r in _join(draft, 2))
    counts = {c.shots: c for c in slots.condition_counts([draft])[draft.pk]}
    assert {(c.slots, c.design_slots, c.free) for c in counts.values()} == {(1, 3, 0)}
    shots = a.condition.shots
    overrides.override(a, admit=False, reason="staff", actor=None)
    replacement = entry.join_study(study=draft, params=inhouse("w9"))
    assert replacement.outcome == Outcome.JOINED and replacement.participation.condition.shots == shots
    with pytest.raises(lifecycle.InvalidTransition, match="full"):
        overrides.override(Participation.objects.get(pk=a.pk), admit=True, reason="staff", actor=None)
    studies.change_status(study=draft, to_status=Study.Status.OPEN, rest=True)
    overrides.override(Participation.objects.get(pk=a.pk), admit=True, reason="staff", actor=None)
    assert Participation.objects.get(pk=a.pk).state in (State.CLAIMED, State.TEST, State.COMPLETED)


# --- Bad input: a clear error, nothing changed -------------------------------------------------------


def test_a_pilot_share_above_the_design_is_refused(draft):
    before = _fields(draft)
    with pytest.raises(ValidationError) as exc:
        studies.study_update(study=draft, pilot_workers_per_condition=4)
    assert "at most the 3 workers per condition" in str(exc.value.message_dict["pilot_workers_per_condition"])
    with pytest.raises(ValidationError):
        studies.study_update(study=draft, workers_per_condition=1, pilot_workers_per_condition=2)
    with pytest.raises(ValidationError):
        studies.study_update(study=draft, pilot_workers_per_condition=0)
    assert _fields(draft) == before


def test_the_command_refuses_a_share_above_the_design_and_changes_nothing(draft):
    before = _fields(draft)
    with pytest.raises(CommandError, match="at most the 3 workers per condition"):
        call_command("configure_study", draft.slug, "--pilot-workers-per-condition", "5")
    with pytest.raises(CommandError, match="whole number"):
        call_command("configure_study", draft.slug, "--pilot-workers-per-condition", "one")
    assert _fields(draft) == before
    call_command("configure_study", draft.slug, "--pilot-workers-per-condition", "2")
    assert Study.objects.get(pk=draft.pk).pilot_workers_per_condition == 2


def test_opening_the_rest_of_a_study_not_in_pilot_is_refused(draft, make_study):
    plain = make_study(shots=(0,), workers=3)  # opened the ordinary way
    for study, said in ((draft, "not opened as a pilot"), (plain, "not opened as a pilot")):
        before = _fields(study)
        with pytest.raises(ValidationError, match=said):
            launch.open_rest(study=study)
        assert _fields(study) == before
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    launch.open_rest(study=draft)
    before = _fields(draft)
    with pytest.raises(ValidationError, match="its rest is already open"):
        launch.open_rest(study=draft)
    assert _fields(draft) == before


def test_a_closed_pilot_has_no_rest_to_open(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    studies.change_status(study=draft, to_status=Study.Status.CLOSED, grace_minutes=0)
    before = _fields(draft)
    with pytest.raises(ValidationError, match="closed"):
        launch.open_rest(study=draft)
    assert _fields(draft) == before


def test_only_a_draft_with_a_share_opens_as_a_pilot(draft, make_study):
    no_share = make_study(shots=(0,), workers=3, status=Study.Status.DRAFT)
    before = _fields(no_share)
    with pytest.raises(ValidationError, match="--pilot-workers-per-condition 1"):
        studies.change_status(study=no_share, to_status=Study.Status.OPEN, pilot=True)
    assert _fields(no_share) == before
    opened = make_study(shots=(0,), workers=3, pilot_workers_per_condition=1)
    before = _fields(opened)
    with pytest.raises(ValidationError, match="Only a draft study opens as a pilot"):
        studies.change_status(study=opened, to_status=Study.Status.OPEN, pilot=True)
    assert _fields(opened) == before
    with pytest.raises(ValidationError):
        studies.change_status(study=draft, to_status=Study.Status.PAUSED, pilot=True)
    assert _fields(draft)[3] is None


def test_a_running_pilot_keeps_its_holders(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    studies.study_update(study=draft, pilot_workers_per_condition=2)
    _join(draft, 4)
    with pytest.raises(ValidationError, match="holds 2 workers"):
        studies.study_update(study=draft, pilot_workers_per_condition=1)
    assert Study.objects.get(pk=draft.pk).pilot_workers_per_condition == 2


# --- The command ------------------------------------------------------------------------------------


def test_check_study_opens_a_pilot_then_the_rest(draft, capsys):
    call_command("configure_study", draft.slug, "--posted-reward", "1.50")
    call_command("check_study", draft.slug, "--open", "--pilot")
    draft.refresh_from_db()
    assert draft.in_pilot and draft.status == Study.Status.OPEN
    call_command("check_study", draft.slug)
    out = capsys.readouterr().out
    assert "pilot: 1 per condition" in out and "--open-rest" in out
    call_command("check_study", draft.slug, "--open-rest")
    draft.refresh_from_db()
    assert not draft.in_pilot and draft.rest_opened_at is not None
    with pytest.raises(CommandError, match="Rest not opened"):
        call_command("check_study", draft.slug, "--open-rest")


def test_check_study_refuses_pilot_without_open(draft):
    with pytest.raises(CommandError, match="--pilot goes with --open"):
        call_command("check_study", draft.slug, "--pilot")
    assert _fields(draft)[0] == Study.Status.DRAFT


# --- The researchers' API -----------------------------------------------------------------------------


@pytest.fixture
def api(db):
    from django.contrib.auth import get_user_model
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("admin", password="pw"))
    return client


def test_the_api_sets_the_share_opens_a_pilot_then_the_rest(api, make_study):
    from decimal import Decimal

    study = make_study(shots=(0, 10), workers=3, status=Study.Status.DRAFT, base_reward=Decimal("1.50"))
    url = f"/api/studies/{study.pk}/"
    response = api.patch(url, {"pilot_workers_per_condition": 4}, content_type="application/json")
    assert response.status_code == 400 and "pilot_workers_per_condition" in response.json()["fields"]
    assert api.patch(url, {"pilot_workers_per_condition": 1}, content_type="application/json").status_code == 200
    status = f"{url}status/"
    response = api.post(status, {"status": "open", "rest": True}, content_type="application/json")
    assert response.status_code == 400 and "not in a pilot" in response.json()["fields"]["status"][0]
    assert _fields(study)[0] == Study.Status.DRAFT
    body = api.post(status, {"status": "open", "pilot": True}, content_type="application/json").json()
    assert body["status"] == "open" and body["pilot_opened_at"] and body["rest_opened_at"] is None
    counts = api.get(f"{url}counts/").json()
    assert [(c["slots"], c["free"]) for c in counts] == [(1, 1), (1, 1)]
    body = api.post(status, {"status": "open", "rest": True}, content_type="application/json").json()
    assert body["rest_opened_at"] and [c["slots"] for c in api.get(f"{url}counts/").json()] == [3, 3]
    response = api.post(status, {"status": "paused", "pilot": True}, content_type="application/json")
    assert response.status_code == 400


def test_the_statement_says_the_study_was_piloted(draft):
    from datetime import UTC, datetime
    from unittest import mock

    from annotation.reporting.statement import build_statement

    def workers():
        sections = build_statement(study=Study.objects.get(pk=draft.pk)).sections
        return {s.title: s.text for s in sections}["Workers"]

    with mock.patch("django.utils.timezone.now", return_value=datetime(2026, 3, 2, 9, tzinfo=UTC)):
        studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    assert "launched as a pilot of 1 worker per condition on 2026-03-02; the rest of its places had not" in workers()
    with mock.patch("django.utils.timezone.now", return_value=datetime(2026, 3, 4, 9, tzinfo=UTC)):
        launch.open_rest(study=draft)
    assert "on 2026-03-02, the rest opened on 2026-03-04; the pilot's workers are counted." in workers()


def test_a_piloted_studys_share_cannot_be_cleared_nor_changed_after_the_rest(draft):
    studies.change_status(study=draft, to_status=Study.Status.OPEN, pilot=True)
    before = _fields(draft)
    with pytest.raises(ValidationError, match="keeps its share"):
        studies.study_update(study=draft, pilot_workers_per_condition=None)
    with pytest.raises(CommandError, match="keeps its share"):
        call_command("configure_study", draft.slug, "--pilot-workers-per-condition", "")
    assert _fields(draft) == before and slots.open_slots(Study.objects.get(pk=draft.pk)) == 1
    launch.open_rest(study=draft)
    before = _fields(draft)
    for share in (None, 2):  # after the rest, the share is the pilot's record (the statement reports it)
        with pytest.raises(ValidationError, match="share"):
            studies.study_update(study=draft, pilot_workers_per_condition=share)
    assert _fields(draft) == before
