"""Messages to participants through Prolific: one, bulk, broadcast; dry run first; each sent once only."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Participation, ProlificCall, ProlificMessage
from annotation.services.prolific import messages
from annotation.services.prolific.message_templates import TEMPLATES
from tests.prolific.conftest import join

State = Participation.State
KINDS = ("close", "reset", "truncate")


@pytest.fixture
def three(prolific_on, prolific_study):
    study, condition = prolific_study
    for slot, pid in enumerate(("p1", "p2", "p3")):
        join(prolific_on, condition, pid, state=State.COMPLETED, slot=slot)
    return study, prolific_on


def _message(*args: str) -> str:
    out = io.StringIO()
    call_command("prolific", "message", *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("kind", ["one", "bulk", "broadcast"])
def test_the_dry_run_sends_and_records_nothing(three, kind):
    study, standin = three
    to = ["--to", "p2"] if kind == "one" else []
    out = _message("--study", study.slug, "--kind", kind, "--template", "thanks", *to)
    assert "Dry run" in out and "to do" in out
    assert standin.writes() == [] and standin.inbox == {}
    assert not ProlificMessage.objects.exists()


@pytest.mark.parametrize("kind", ["one", "bulk", "broadcast"])
def test_each_kind_is_sent_once_recorded_and_a_second_run_sends_nothing(three, kind):
    study, standin = three
    to = ["--to", "p2"] if kind == "one" else []
    args = ("--study", study.slug, "--kind", kind, "--template", "bonus", "--run", "--by", "alice", *to)
    _message(*args)
    expected = ["p2"] if kind == "one" else ["p1", "p2", "p3"]
    body = TEMPLATES["bonus"]["en"].body
    assert {pid: texts for pid, texts in standin.inbox.items()} == {pid: [body] for pid in expected}
    row = ProlificMessage.objects.get()
    assert (row.kind, row.status, row.sent_by, row.body) == (kind, "done", "alice", body)
    assert sorted(row.recipients) == expected and row.recipient_count == len(expected)
    assert row.prolific_study == "PS1" and row.calls.count() == 1
    again = _message(*args)
    assert "done" in again and "sent" in again
    assert standin.inbox == {pid: [body] for pid in expected}  # nobody got it twice
    assert ProlificMessage.objects.count() == 1
    # --again sends the same text once more, deliberately.
    _message(*args, "--again", "reminder")
    assert standin.inbox == {pid: [body, body] for pid in expected}


@pytest.mark.parametrize("how", ["close", "reset"])  # a 204 has no body to cut half-way
@pytest.mark.parametrize("kind", ["one", "bulk"])
def test_a_lost_reply_leaves_it_uncertain_and_a_retry_sends_nothing(three, kind, how):
    study, standin = three
    standin.drop_reply["messages/"] = how
    what = {"study": study, "kind": kind, "text": "Hello", "participant": "p1" if kind == "one" else None}
    first = messages.send(**what, sent_by="alice")
    assert [i.state for i in first] == ["uncertain"]
    inbox = {k: list(v) for k, v in standin.inbox.items()}
    assert inbox and all(v == ["Hello"] for v in inbox.values())  # it did reach them
    second = messages.send(**what, sent_by="alice")
    assert [i.state for i in second] == ["uncertain"] and "resolve" in second[0].note
    assert standin.inbox == inbox  # not sent twice
    assert ProlificMessage.objects.get().status == "uncertain"
    assert ProlificCall.objects.filter(message__isnull=False, ok=False).count() == 1
    row = messages.resolve(key=first[0].key, sent=True, note="seen in Prolific's sent messages")
    assert row.status == "done" and messages.plan(**what)[0].state == "done"


@pytest.mark.parametrize("how", KINDS)
def test_a_broadcast_whose_reply_was_lost_is_sent_again_under_its_id_and_arrives_once(three, how):
    study, standin = three
    standin.drop_reply["broadcasts/"] = how
    what = {"study": study, "kind": "broadcast", "template": "paused"}
    assert [i.state for i in messages.send(**what, sent_by="alice")] == ["uncertain"]
    assert len(standin.broadcasts) == 1
    again = messages.send(**what, sent_by="alice")
    assert [i.state for i in again] == ["done"]
    body = TEMPLATES["paused"]["en"].body
    assert standin.inbox == {pid: [body] for pid in ("p1", "p2", "p3")}  # once each
    row = ProlificMessage.objects.get()
    assert row.status == "done" and row.prolific_id == row.key and list(standin.broadcasts) == [row.key]
    posted = [r for r in standin.writes() if "broadcasts" in r[1]]
    assert len(posted) == 2 and {r[2]["id"] for r in posted} == {row.key}


def test_a_broadcast_where_the_workspace_has_none_fails_clearly_and_nothing_is_sent(three):
    study, standin = three
    standin.broadcasts_enabled = False
    with pytest.raises(CommandError, match="failed or are uncertain"):
        _message("--study", study.slug, "--kind", "broadcast", "--template", "thanks", "--run")
    row = ProlificMessage.objects.get()
    assert row.status == "failed" and "404" in row.error
    assert standin.inbox == {}
    standin.broadcasts_enabled = True  # a later run tries again
    _message("--study", study.slug, "--kind", "broadcast", "--template", "thanks", "--run")
    assert ProlificMessage.objects.get().status == "done" and len(standin.inbox) == 3


def test_templates_exist_in_every_language_the_pages_ship_in(settings, three):
    study, standin = three
    shipped = [code for code, _ in settings.LANGUAGES]
    for name, versions in TEMPLATES.items():
        assert sorted(versions) == sorted(shipped), name
    out = _message("--study", study.slug, "--kind", "bulk", "--template", "thanks", "--language", "de")
    assert TEMPLATES["thanks"]["de"].body in out
    study.language = "zh-hans"
    study.save(update_fields=["language"])
    assert messages.plan(study=study, kind="bulk", template="paused")[0].body == TEMPLATES["paused"]["zh-hans"].body


def test_a_text_over_the_length_limit_is_refused_before_sending(three):
    study, standin = three
    with pytest.raises(CommandError, match=f"at most {messages.MAX_BODY_CHARS}.*Nothing was sent"):
        _message("--study", study.slug, "--kind", "bulk", "--text", "x" * 5001, "--run")
    assert standin.writes() == [] and not ProlificMessage.objects.exists()


def test_more_recipients_than_prolific_takes_are_refused_before_sending(three, monkeypatch):
    study, standin = three
    monkeypatch.setattr(messages, "MAX_RECIPIENTS", 2)  # three participants, a limit of two
    with pytest.raises(CommandError, match="3 recipients .* at most 2 in one call"):
        _message("--study", study.slug, "--kind", "broadcast", "--template", "thanks", "--run")
    assert standin.writes() == [] and not ProlificMessage.objects.exists()


def test_the_stand_in_refuses_a_bulk_message_over_the_documented_limit(three):
    from annotation.services.prolific.client import ProlificRequestError
    from annotation.services.prolific.runs import make_client

    _, standin = three
    with pytest.raises(ProlificRequestError, match="4000"):
        make_client().bulk_message(ids=[f"x{i}" for i in range(4001)], body="Hi", study_id="PS1")
    assert standin.inbox == {}


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["--kind", "one"], "needs their Prolific id"),
        (["--kind", "one", "--to", "stranger"], "No Prolific participant with this id"),
        (["--kind", "bulk", "--to", "p1"], "goes to all of them"),
        (["--kind", "bulk"], "The message is empty"),
        (["--kind", "broadcast", "--text", "Hi"], "needs a subject"),
        (["--kind", "bulk", "--template", "thanks", "--language", "fr"], "has no 'fr' text"),
    ],
)
def test_bad_input_is_refused_and_nothing_is_sent(three, args, error):
    study, standin = three
    with pytest.raises(CommandError, match=error):
        _message("--study", study.slug, *args, "--run")
    assert standin.writes() == [] and not ProlificMessage.objects.exists()


def test_a_withdrawn_participant_is_no_recipient_and_their_id_in_sent_messages_is_pseudonymised(three):
    from annotation.services.rights import withdrawal

    study, standin = three
    messages.send(study=study, kind="bulk", text="Hello", sent_by="alice")
    done = withdrawal.withdraw(platform="prolific", external_id="p2", run_by="alice")
    row = ProlificMessage.objects.get()
    assert "p2" not in row.recipients and done.pseudonym in row.recipients
    sent = [call.request for call in ProlificCall.objects.filter(message=row)]
    assert len(sent) == 1 and "p2" not in sent[0]["ids"] and done.pseudonym in sent[0]["ids"]
    assert messages.plan(study=study, kind="bulk", text="Hello again")[0].recipients == ["p1", "p3"]


def test_the_commands_docs_prolific_shows_run_as_written_against_the_stand_in(prolific_on, prolific_study):
    import shlex

    from tests.docs.blocks import REPO, blocks

    study, condition = prolific_study
    study.slug = "clues-sst2-split1"
    study.save(update_fields=["slug"])
    first, second = "5f0c0ffee0ddba11deadbeef", "60aaaaaaaaaaaaaaaaaaaaaa"
    join(prolific_on, condition, first, state=State.COMPLETED, slot=0)
    join(prolific_on, condition, second, state=State.COMPLETED, slot=1)
    [block] = [b for b in blocks(REPO / "docs" / "prolific.md") if "prolific message" in b.text]
    for command in block.commands():
        args = shlex.split(command)
        assert args[:3] == [".venv/bin/python", "manage.py", "prolific"], command
        call_command(*args[2:], stdout=io.StringIO())
    thanks, paused = TEMPLATES["thanks"]["en"].body, TEMPLATES["paused"]["de"].body
    assert prolific_on.inbox == {
        first: [thanks, "Your bonus was paid today.", paused],
        second: [thanks, paused],
    }
    assert set(ProlificMessage.objects.values_list("sent_by", flat=True)) == {"alice", "manage.py prolific"}


def test_resolving_an_uncertain_message_from_the_command(three):
    study, standin = three
    standin.drop_reply["messages/bulk/"] = "close"
    [item] = messages.send(study=study, kind="bulk", text="Hello", sent_by="alice")
    with pytest.raises(CommandError, match="needs --sent yes or --sent no"):
        _message("--study", study.slug, "--resolve", item.key)
    out = _message("--study", study.slug, "--resolve", item.key, "--sent", "no")
    assert "failed" in out  # not sent: the next run sends it
    messages.send(study=study, kind="bulk", text="Hello", sent_by="alice")
    assert standin.inbox == {pid: ["Hello", "Hello"] for pid in ("p1", "p2", "p3")}  # as resolved by hand
    with pytest.raises(CommandError, match="not uncertain"):
        _message("--study", study.slug, "--resolve", item.key, "--sent", "yes")


def test_the_admin_page_shows_the_dry_run_then_sends_once(three):
    from django.contrib.auth.models import User
    from django.test import Client

    study, standin = three
    User.objects.create_superuser("pi", "pi@example.org", "pw")
    staff = Client()
    staff.login(username="pi", password="pw")
    picked = staff.post("/admin/annotation/study/", {"action": "prolific_message", "_selected_action": [study.pk]})
    url = f"/admin/annotation/study/{study.pk}/prolific-message/"
    assert picked.status_code == 302 and picked["Location"] == url
    assert staff.get(url).status_code == 200
    form = {"kind": "bulk", "template": "thanks", "language": "", "subject": "", "text": "", "to": "", "again": ""}
    dry = staff.post(url, {**form, "preview": "1"}).content.decode()
    assert "Dry run" in dry and TEMPLATES["thanks"]["en"].body in dry and 'name="send"' in dry
    assert standin.inbox == {} and not ProlificMessage.objects.exists()
    sent = staff.post(url, {**form, "send": "1"}).content.decode()
    assert "Sent" in sent and ProlificMessage.objects.get().sent_by == "pi"
    staff.post(url, {**form, "send": "1"})  # a second press sends nothing
    assert standin.inbox == {pid: [TEMPLATES["thanks"]["en"].body] for pid in ("p1", "p2", "p3")}
    refused = staff.post(url, {**form, "template": "", "send": "1"}).content.decode()
    assert "The message is empty" in refused and "Nothing was sent" in refused
    assert ProlificMessage.objects.count() == 1
    assert "Prolific messages" in staff.get("/admin/annotation/prolificmessage/").content.decode()


def test_the_json_dry_run_lists_each_call_with_its_recipients(three):
    import json

    study, standin = three
    data = json.loads(_message("--study", study.slug, "--kind", "broadcast", "--template", "bonus", "--json"))
    assert data["dry_run"] is True
    [one] = data["messages"]
    assert (one["kind"], one["prolific_study"], one["recipients"]) == ("broadcast", "PS1", ["p1", "p2", "p3"])
    assert one["subject"] == TEMPLATES["bonus"]["en"].subject and one["state"] == "to do"
    assert standin.writes() == []


def test_the_api_runs_the_dry_run_then_sends_once_and_refuses_bad_input(three, settings):
    from django.contrib.auth.models import User
    from django.test import Client

    study, standin = three
    User.objects.create_superuser("pi", "pi@example.org", "pw")
    staff = Client()
    staff.login(username="pi", password="pw")
    url = f"/api/studies/{study.pk}/prolific-messages/"

    def post(**data):
        return staff.post(url, data, content_type="application/json")

    dry = post(kind="one", to="p3", template="thanks")
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert [(m["recipients"], m["state"]) for m in dry.json()["messages"]] == [(["p3"], "to do")]
    assert standin.inbox == {}
    for _ in range(2):
        sent = post(kind="one", to="p3", template="thanks", run=True)
        assert sent.status_code == 200 and sent.json()["messages"][0]["state"] == "done"
    assert standin.inbox == {"p3": [TEMPLATES["thanks"]["en"].body]}
    assert ProlificMessage.objects.get().sent_by == "pi"
    too_long = post(kind="bulk", text="x" * (messages.MAX_BODY_CHARS + 1), run=True)
    assert too_long.status_code == 400 and too_long.json()["error"] == "invalid"
    assert f"at most {messages.MAX_BODY_CHARS}" in too_long.json()["detail"]
    assert post(kind="shout", text="Hi").status_code == 400
    assert staff.post("/api/studies/999999/prolific-messages/", {"kind": "bulk"}, "application/json").status_code == 404
    settings.PROLIFIC_API_TOKEN = ""
    off = post(kind="bulk", text="Hi", run=True)
    assert off.status_code == 409 and off.json()["error"] == "prolific_off"
    assert post(kind="bulk", text="Hi").status_code == 200  # the dry run needs no Prolific
    assert ProlificMessage.objects.count() == 1 and list(standin.inbox) == ["p3"]
