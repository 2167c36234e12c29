"""/join/<slug>/: the start page (GET, nothing held), taking part (POST), and every refusal's page and status."""

import pytest
from django.test import Client
from django.urls import reverse

from annotation.models import ConsentDecline, Participation, ParticipationEvent, Study, Worker
from annotation.services.admission import consent
from annotation.services.state import lifecycle
from annotation.web import worker_cookie
from tests.entry_link import take_part
from tests.factories import ParticipationFactory, WorkerFactory

pytestmark = pytest.mark.django_db


def _rows():
    return Worker.objects.count(), Participation.objects.count(), ParticipationEvent.objects.count()


def _worker_of(client) -> int | None:
    """The participation the browser's worker cookie names (None without one)."""
    morsel = client.cookies.get(worker_cookie.COOKIE)
    return worker_cookie.read(morsel.value) if morsel is not None and morsel.value else None


def _join(client, study_or_slug, **params):
    """Take part: the start page's Start (or Agree) posted back to the link."""
    slug = study_or_slug if isinstance(study_or_slug, str) else study_or_slug.slug
    return take_part(client, slug, params)


def _open(client, study_or_slug, **params):
    """Only open the link (GET)."""
    slug = study_or_slug if isinstance(study_or_slug, str) else study_or_slug.slug
    return client.get(reverse("entry:join", args=[slug]), params)


def test_the_entry_url_is_named_entry_join():
    assert reverse("entry:join", args=["demo-sst2"]) == "/join/demo-sst2/"


def test_a_new_worker_is_redirected_to_the_worker_pages_with_the_participation_in_the_cookie(client, study):
    response = _join(client, study, worker_id="alice")
    assert response.status_code == 302 and response["Location"] == "/work/"
    participation = Participation.objects.get()
    assert _worker_of(client) == participation.pk
    cookie = response.cookies[worker_cookie.COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and cookie["max-age"] > 0
    assert str(participation.pk) in cookie.value  # signed, not encrypted: it names the participation only
    assert participation.worker.external_id == "alice"


def test_prolific_and_mturk_entries_keep_their_platform_data(client, study):
    _join(client, study, PROLIFIC_PID="pp1", STUDY_ID="s", SESSION_ID="x")
    _join(client, study, workerId="A1", assignmentId="ASG", hitId="H", turkSubmitTo="https://www.mturk.com")
    by_platform = {p.worker.platform: p.platform_data for p in Participation.objects.select_related("worker")}
    assert by_platform["prolific"] == {"STUDY_ID": "s", "SESSION_ID": "x"}
    assert by_platform["mturk"] == {"assignmentId": "ASG", "hitId": "H", "turkSubmitTo": "https://www.mturk.com"}


def test_opening_the_link_again_resumes_in_a_new_browser_too(client, study):
    _join(client, study, worker_id="alice")
    first = _worker_of(client)
    client.cookies.clear()
    response = _open(client, study, worker_id="alice")
    assert response.status_code == 302 and _worker_of(client) == first
    assert Participation.objects.count() == 1


def test_unknown_study_is_404_and_creates_nothing(client, study):
    assert _join(client, "no-such-study", worker_id="alice").status_code == 404
    assert _rows() == (0, 0, 0)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"worker_id": ""},
        {"worker_id": "   "},
        {"PROLIFIC_PID": ""},
        {"workerId": "", "assignmentId": "A"},
        {"workerId": "A1", "assignmentId": "A", "turkSubmitTo": "https://evil.example"},
    ],
)
def test_a_link_without_a_usable_worker_id_is_400_and_creates_nothing(client, study, params):
    response = _join(client, study, **params)
    assert response.status_code == 400
    assert b"This link is incomplete" in response.content
    assert _rows() == (0, 0, 0)
    assert _worker_of(client) is None


@pytest.mark.parametrize(
    "status, code, text",
    [
        (Study.Status.CLOSED, 410, b"This study has closed"),
        (Study.Status.PAUSED, 403, b"This study is paused"),
        (Study.Status.DRAFT, 403, b"not open for participants yet"),
    ],
)
def test_a_study_that_is_not_open_answers_with_a_clear_page_and_creates_nothing(client, make_study, status, code, text):
    study = make_study(status=status)
    response = _join(client, study, worker_id="alice")
    assert response.status_code == code and text in response.content
    assert _rows() == (0, 0, 0)


def test_a_full_study_is_409_with_a_polite_page_and_creates_nothing(client, make_study):
    study = make_study(shots=[0], workers=1)
    _join(client, study, worker_id="first")
    before = _rows()
    response = _join(client, study, worker_id="second")
    assert response.status_code == 409 and b"This study is full" in response.content
    assert _rows() == before


def test_the_full_page_asks_one_thing_go_back_with_the_code_not_also_return_the_study(client, make_study):
    coded = make_study(shots=[0], workers=1, outcome_codes={"completed": {"code": "C1"}, "full": {"code": "FULL9"}})
    _join(client, coded, worker_id="first")
    page = _join(Client(), coded, worker_id="second").content.decode()
    assert "FULL9" in page and "go back to your platform as shown below" in page
    assert "return the study" not in page  # never both: return it, and go back with this code


def test_a_worker_who_took_part_in_the_task_is_told_so_with_403(client, make_study):
    earlier, later = make_study(), make_study()
    ParticipationFactory(
        condition=earlier.conditions.get(shots=30),
        worker=WorkerFactory(external_id="alice"),
        state=Participation.State.EXCLUDED,
    )
    before = _rows()
    response = _join(client, later, worker_id="alice")
    assert response.status_code == 403
    assert b"You have already taken part in this task" in response.content
    assert _rows() == before


def test_an_abandoned_worker_reopening_the_link_is_told_their_place_was_released(client, study):
    ParticipationFactory(
        condition=study.conditions.get(shots=10),
        worker=WorkerFactory(external_id="alice"),
        state=Participation.State.ABANDONED,
    )
    before = _rows()
    response = _join(client, study, worker_id="alice")
    assert response.status_code == 403
    assert b"Your place in this study was released" in response.content
    assert _worker_of(client) is None
    assert _rows() == before


def test_a_blocked_worker_gets_403_and_nothing_is_created(client, study):
    WorkerFactory(external_id="mallory", blocked=True)
    response = _join(client, study, worker_id="mallory")
    assert response.status_code == 403 and b"cannot take part" in response.content
    assert _rows() == (1, 0, 0)


def test_mturk_preview_shows_only_the_task_description(client, study):
    response = _join(client, study, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE", hitId="H")
    assert response.status_code == 200
    assert study.task.description.encode() in response.content
    assert b"preview" in response.content
    assert _rows() == (0, 0, 0)
    assert "X-Frame-Options" not in response  # MTurk shows it in an iframe


def test_mturk_preview_of_a_closed_study_says_it_is_closed(client, make_study):
    study = make_study(status=Study.Status.CLOSED)
    assert _join(client, study, assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE").status_code == 410


def test_only_get_and_post_are_allowed(client, study):
    assert client.put(reverse("entry:join", args=[study.slug]) + "?worker_id=a").status_code == 405
    assert _rows() == (0, 0, 0)


def test_a_new_identity_in_the_same_browser_replaces_the_cookie(client, study):
    _join(client, study, worker_id="alice")
    _join(client, study, worker_id="bob")
    assert _worker_of(client) == Participation.objects.get(worker__external_id="bob").pk


def test_inside_an_iframe_the_worker_is_sent_to_a_tab_of_their_own_that_resumes_the_slot(client, study):
    params = {"workerId": "A1", "assignmentId": "ASG", "hitId": "H", "turkSubmitTo": "https://www.mturk.com"}
    framed = client.get(reverse("entry:join", args=[study.slug]), params, HTTP_SEC_FETCH_DEST="iframe")
    assert framed.status_code == 200 and b"Open the task in a new tab" in framed.content
    assert b'target="_blank"' in framed.content and b"workerId=A1" in framed.content
    assert _rows() == (0, 0, 0)  # the HIT's frame holds nothing: the worker takes part in the tab
    in_tab = client.get(reverse("entry:join", args=[study.slug]), params, HTTP_SEC_FETCH_DEST="document")
    assert in_tab.status_code == 200 and b'id="entry-start"' in in_tab.content
    assert _join(client, study, **params).status_code == 302
    participation = Participation.objects.get()
    framed_again = client.get(reverse("entry:join", args=[study.slug]), params, HTTP_SEC_FETCH_DEST="iframe")
    assert b"Your place is reserved" in framed_again.content
    in_tab = client.get(reverse("entry:join", args=[study.slug]), params, HTTP_SEC_FETCH_DEST="document")
    assert in_tab.status_code == 302 and _worker_of(client) == participation.pk
    assert Participation.objects.count() == 1


def test_an_excluded_mturk_worker_reopening_the_link_sees_the_kind_page_with_the_hit_submit_form(client, study):
    params = {"workerId": "A1", "assignmentId": "ASG", "hitId": "H", "turkSubmitTo": "https://www.mturk.com"}
    _join(client, study, **params)
    participation = Participation.objects.get()
    lifecycle.begin(participation)
    lifecycle.exclude(participation, reason="failed training filter", kind=Participation.ExclusionKind.TRAINING_FILTER)
    client.logout()  # a new browser
    before = _rows()
    response = _open(client, study, **params)
    assert response.status_code == 302 and response["Location"] == "/work/"
    html = client.get("/work/").content.decode()
    assert "You will be paid for the time you have spent" in html
    assert 'action="https://www.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="ASG"' in html and participation.completion_code in html
    assert _rows() == before


def test_an_excluded_prolific_worker_is_given_the_way_back_to_prolific_with_the_code(client, make_study):
    study = make_study(outcome_codes={"screened_out": {"code": "CC7"}})
    _join(client, study, PROLIFIC_PID="pp1", STUDY_ID="s", SESSION_ID="x")
    participation = Participation.objects.get()
    lifecycle.begin(participation)
    lifecycle.exclude(participation, reason="failed training filter", kind=Participation.ExclusionKind.TRAINING_FILTER)
    html = client.get("/work/").content.decode()
    assert "CC7" in html and 'href="https://app.prolific.com/submissions/complete?cc=CC7"' in html


# --- Worker ids from the raw link ----------------------------------------------------------


@pytest.mark.parametrize("raw", ["worker_id=%ff", "worker_id=%fe", "worker_id=al%E9ice", "PROLIFIC_PID=%ff"])
def test_an_id_that_is_not_valid_utf8_is_400_and_creates_nothing(client, study, raw):
    response = client.get(f"/join/{study.slug}/?{raw}")
    assert response.status_code == 400 and b"not valid UTF-8" in response.content
    assert _rows() == (0, 0, 0)
    assert _worker_of(client) is None


def test_two_different_invalid_ids_never_become_one_worker(client, study):
    """%ff and %fe used to both decode to U+FFFD: the second worker resumed the first one's slot."""
    for raw in ("worker_id=%ff", "worker_id=%fe"):
        assert client.get(f"/join/{study.slug}/?{raw}").status_code == 400
    assert Worker.objects.count() == 0


def test_a_valid_utf8_id_enters(client, study):
    assert client.post(f"/join/{study.slug}/?worker_id=%C3%A9milie", {"choice": "start"}).status_code == 302
    assert Worker.objects.get().external_id == "émilie"


def test_the_same_id_on_two_platforms_is_two_workers(client, make_study):
    """Platforms' ids live in different namespaces: one person's Prolific and MTurk accounts are two identities."""
    first, second = make_study(), make_study()
    assert _join(client, first, PROLIFIC_PID="abc").status_code == 302
    assert _join(client, second, worker_id="abc").status_code == 302
    assert sorted(Worker.objects.values_list("platform", "external_id")) == [("inhouse", "abc"), ("prolific", "abc")]


# --- The start page: nothing is held until the worker takes part ----------------------------


def test_four_workers_opening_the_link_take_no_slot_and_write_nothing(client, make_study):
    study = make_study(workers=1)  # four conditions of one slot each
    for name in ("w1", "w2", "w3", "w4"):
        page = _open(client, study, worker_id=name)
        assert page.status_code == 200 and b'id="entry-start"' in page.content
        assert b'id="fact-items"' in page.content and study.task.description.encode() in page.content
    assert _rows() == (0, 0, 0) and _worker_of(client) is None
    assert _join(client, study, worker_id="w5").status_code == 302  # every slot was still free


def test_the_two_first_pages_ask_for_two_different_things(client, make_study):
    """Without a consent text, the entry page holds a place ("Take part") and the worker's start page, with the
    instructions, begins the work ("Start"): not Start twice on two near-identical pages (issue 40, item 14)."""
    study = make_study()
    entry_page = _open(client, study, worker_id="w1").content.decode()
    assert 'id="entry-start">Take part</button>' in entry_page and ">Start</button>" not in entry_page
    assert _join(client, study, worker_id="w1").status_code == 302
    start_page = client.get(reverse("worker:home"), follow=True).content.decode()
    assert 'id="start-button" disabled>Start</button>' in start_page and "Take part</button>" not in start_page
    refused = client.post(f"/join/{study.slug}/?worker_id=w2", {"choice": "nonsense"})
    assert refused.status_code == 400 and "Press Take part to join the study." in refused.content.decode()


def test_opening_then_agreeing_takes_exactly_one_slot_and_records_the_consent_and_the_claim(client, make_study):
    study = make_study(consent_required=True, consent_text="We record your answers.")
    page = _open(client, study, worker_id="alice")
    assert page.status_code == 200 and b"We record your answers." in page.content
    assert _rows() == (0, 0, 0)
    text_hash = consent.text_hash("We record your answers.")
    response = client.post(page.request["PATH_INFO"] + "?worker_id=alice", {"choice": "agree", "text_hash": text_hash})
    assert response.status_code == 302 and response["Location"] == "/work/"
    participation = Participation.objects.get()
    assert participation.consent_hash == text_hash and participation.consented_at is not None
    claim = ParticipationEvent.objects.get(participation=participation)
    assert claim.from_state == "" and claim.to_state == Participation.State.CLAIMED  # the paid time starts here
    assert _worker_of(client) == participation.pk
    assert b"consent-agree" not in client.get("/work/").content  # agreed already: straight to the start page


def test_a_worker_who_only_looked_leaves_the_slot_to_the_next(client, make_study):
    study = make_study(shots=[0], workers=1)
    assert _open(client, study, worker_id="looker").status_code == 200
    client.cookies.clear()  # the tab is closed
    assert _join(client, study, worker_id="keen").status_code == 302
    assert list(Participation.objects.values_list("worker__external_id", flat=True)) == ["keen"]
    late = _join(client, study, worker_id="looker")  # full is decided when they take part
    assert late.status_code == 409 and b"This study is full" in late.content


def test_declining_before_any_slot_records_the_decline_and_gives_the_declined_code(client, make_study):
    study = make_study(
        consent_required=True, consent_text="Terms.", outcome_codes={"declined": {"code": "NOPE1"}}, workers=1
    )
    response = client.post(f"/join/{study.slug}/?PROLIFIC_PID=pp9&STUDY_ID=s", {"choice": "decline"})
    assert response.status_code == 200 and b"You have chosen not to take part" in response.content
    assert b"app.prolific.com/submissions/complete?cc=NOPE1" in response.content
    assert Participation.objects.count() == 0 and ParticipationEvent.objects.count() == 0
    decline = ConsentDecline.objects.get()
    assert decline.study == study and decline.worker.external_id == "pp9"
    assert consent.declined_count(study) == 1
    again = _open(client, study, PROLIFIC_PID="pp9", STUDY_ID="s")  # the answer stands, and shows the code again
    assert again.status_code == 200 and b"NOPE1" in again.content
    assert client.post(f"/join/{study.slug}/?PROLIFIC_PID=pp9", {"choice": "decline"}).status_code == 200
    assert ConsentDecline.objects.count() == 1  # one per worker and study
    assert _join(client, study, PROLIFIC_PID="pp9").status_code == 200 and Participation.objects.count() == 0


def test_a_decline_is_not_the_workers_try_at_the_task(client, make_study):
    first = make_study(consent_required=True, consent_text="Terms.")
    second = make_study()
    client.post(f"/join/{first.slug}/?worker_id=carol", {"choice": "decline"})
    assert _join(client, second, worker_id="carol").status_code == 302


def test_agreeing_to_a_text_that_changed_since_the_page_is_409_and_claims_nothing(client, make_study):
    study = make_study(consent_required=True, consent_text="Version 2.")
    stale = consent.text_hash("Version 1.")
    response = client.post(f"/join/{study.slug}/?worker_id=dan", {"choice": "agree", "text_hash": stale})
    assert response.status_code == 409 and b"Version 2." in response.content
    assert _rows() == (0, 0, 0)


@pytest.mark.parametrize("consent_asked, choice", [(True, "start"), (True, ""), (False, "agree"), (False, "decline")])
def test_a_form_without_a_valid_choice_is_400_and_claims_nothing(client, make_study, consent_asked, choice):
    options = {"consent_required": True, "consent_text": "Terms."} if consent_asked else {}
    study = make_study(**options)
    response = client.post(f"/join/{study.slug}/?worker_id=eve", {"choice": choice})
    assert response.status_code == 400 and b'id="entry-error"' in response.content
    assert _rows() == (0, 0, 0)


def test_an_mturk_preview_posted_to_stays_a_preview(client, study):
    response = client.post(f"/join/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H", {"choice": "start"})
    assert response.status_code == 200 and b"This is a preview" in response.content
    assert _rows() == (0, 0, 0)


def test_the_statement_counts_agreements_and_declines_made_at_the_entry_page(client, make_study):
    from annotation.reporting.statement import consent_facts

    study = make_study(consent_required=True, consent_text="Terms.")
    assert _open(client, study, worker_id="onlylooked").status_code == 200
    assert client.post(f"/join/{study.slug}/?worker_id=no", {"choice": "decline"}).status_code == 200
    assert _join(client, study, worker_id="yes").status_code == 302
    assert "(1 agreed, 1 declined;" in consent_facts(study)
