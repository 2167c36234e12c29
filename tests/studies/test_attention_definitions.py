"""Defining attention checks: the service's rules, and the API, command and admin that call it."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import AttentionCheck, Study
from annotation.services.verdicts import attention
from tasks_app.models import Example, ExampleSet
from tests.entry_link import take_part
from tests.factories import make_span_task

pytestmark = pytest.mark.django_db

TEST_SIZE = 6  # make_classification_task's default test set


def _nothing_stored(examples_before: int) -> bool:
    return not AttentionCheck.objects.exists() and Example.objects.count() == examples_before


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"position": 7}, "position", "position 7 is beyond the test set: it has 6 items"),
        ({"position": 0}, "position", "beyond the test set"),
        ({"position": "3"}, "position", "whole number"),
        ({"expected_label": "neutral"}, "expected_label", "'neutral' is not a label of SST-2"),
        ({"expected_label": "", "expected_spans": ["orange"]}, "expected_spans", "classification task"),
        ({"context": "  "}, "context", "non-empty"),
        ({"question": ""}, "question", "non-empty"),
    ],
)
def test_a_bad_classification_check_is_refused_and_nothing_is_stored(study, fields, field, message):
    before = Example.objects.count()
    definition = {"position": 3, "context": "Read.", "question": "Choose 'negative'.", "expected_label": "negative"}
    with pytest.raises(attention.definitions.AttentionCheckError) as caught:
        attention.definitions.create_check(study=study, **{**definition, **fields})
    assert caught.value.field == field and message in caught.value.message
    assert _nothing_stored(before)


@pytest.mark.parametrize(
    ("spans", "message"),
    [
        (["banana"], "the target 'banana' is not a word of the check's text"),
        (["orang"], "not a word"),  # part of a word is not the word
        ([], "at least one word"),
        ("orange", "list of strings"),
    ],
)
def test_a_span_check_whose_target_is_not_in_its_text_is_refused(make_study, spans, message):
    task = make_span_task(slug="spans")
    study = make_study(for_task=task, shots=[0])
    before = Example.objects.count()
    with pytest.raises(attention.definitions.AttentionCheckError) as caught:
        attention.definitions.create_check(
            study=study,
            position=1,
            context="The orange was on the table.",
            question="Select the word 'orange'.",
            expected_spans=spans,
        )
    assert caught.value.field == "expected_spans" and message in caught.value.message
    assert _nothing_stored(before)


def test_two_checks_cannot_share_a_position(study):
    attention.definitions.generate(study=study, positions=[2])
    with pytest.raises(attention.definitions.AttentionCheckError, match="already has an attention check at position 2"):
        attention.definitions.generate(study=study, positions=[1, 2])
    assert list(study.attention_checks.values_list("position", flat=True)) == [2]  # all or nothing


def test_a_check_never_enters_the_tasks_sets_or_the_test_sets_hash(study):
    test_set = ExampleSet.objects.get(task=study.task, role=ExampleSet.Role.TEST)
    hash_before, items_before = test_set.content_hash, test_set.items.count()
    (check,) = attention.definitions.generate(study=study, positions=[1])
    test_set.refresh_from_db()
    assert (test_set.content_hash, test_set.items.count()) == (hash_before, items_before)
    assert not check.example.set_items.exists()
    assert check.example.source_id.startswith(attention.definitions.SOURCE_PREFIX)
    assert check.example.gold_answers == [check.expected_label]


def test_templates_take_the_labels_in_turn_and_a_rate_gives_the_positions(study):
    assert attention.definitions.positions_every(study, 2) == [2, 4, 6]
    checks = attention.definitions.generate(study=study, positions=attention.definitions.positions_every(study, 2))
    assert [c.expected_label for c in checks] == ["positive", "negative", "positive"]
    assert all(c.source == AttentionCheck.Source.TEMPLATE for c in checks)
    assert checks[1].question == "To show you are reading, choose “negative”."


def test_span_templates_select_a_word_of_their_sentence(make_study):
    study = make_study(for_task=make_span_task(slug="sp2"), shots=[0])
    (check,) = attention.definitions.generate(study=study, positions=[1])
    word = check.expected_spans[0]
    assert word in check.context and f"“{word}”" in check.question
    assert check.example.gold_spans[0]["text"] == word


def test_interleave_puts_each_check_at_its_item_number():
    assert attention.rule.interleave([10, 11, 12], [(3, 90, 1), (1, 91, 2)]) == [
        (91, 2),
        (10, None),
        (90, 1),
        (11, None),
        (12, None),
    ]
    assert attention.rule.interleave([10], [(5, 90, 1)]) == [(10, None), (90, 1)]  # past the end: last


# --- API -------------------------------------------------------------------------------------


@pytest.fixture
def api(admin_client):
    return admin_client


def test_the_api_creates_lists_and_reports_checks(api, study):
    body = {
        "study": study.slug,
        "position": 2,
        "context": "Read.",
        "question": "Choose 'positive'.",
        "expected_label": "positive",
    }
    created = api.post("/api/attention-checks/", body, content_type="application/json")
    assert created.status_code == 201, created.content
    assert created.json()["source"] == "researcher"
    listed = api.get(f"/api/attention-checks/?study={study.slug}").json()
    assert [c["position"] for c in listed] == [2]
    generated = api.post(
        "/api/attention-checks/generate/", {"study": study.slug, "every": 3}, content_type="application/json"
    )
    assert generated.status_code == 201 and [c["position"] for c in generated.json()] == [3, 6]
    assert api.get(f"/api/attention-checks/report/?study={study.slug}").json() == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"position": 99}, "position"),
        ({"expected_label": "maybe"}, "expected_label"),
        ({"position": 0}, "position"),
    ],
)
def test_the_api_refuses_a_bad_check_with_400_naming_the_field(api, study, body, field):
    base = {"study": study.slug, "position": 2, "context": "Read.", "question": "Q?", "expected_label": "positive"}
    reply = api.post("/api/attention-checks/", {**base, **body}, content_type="application/json")
    assert reply.status_code == 400 and reply.json()["error"] == "invalid" and field in reply.json()["fields"]
    assert not AttentionCheck.objects.exists()


def test_the_api_report_needs_a_known_study(api):
    assert api.get("/api/attention-checks/report/").status_code == 400
    assert api.get("/api/attention-checks/report/?study=nope").status_code == 404


def test_the_api_refuses_generate_with_both_or_neither_rate_and_positions(api, study):
    for body in ({"study": study.slug}, {"study": study.slug, "every": 2, "positions": [1]}):
        assert api.post("/api/attention-checks/generate/", body, content_type="application/json").status_code == 400
    assert not AttentionCheck.objects.exists()


def test_a_check_a_worker_has_been_given_can_be_neither_changed_nor_deleted(api, study, client):
    (check,) = attention.definitions.generate(study=study, positions=[1])
    take_part(client, study.slug, {"worker_id": "zoe"})
    client.post("/api/session/start/", content_type="application/json")
    client.get("/api/session/current/")  # zoe's test or training step; lay out the test step directly:
    from annotation.models import Participation
    from annotation.services.session import steps

    p = Participation.objects.get(worker__external_id="zoe")
    steps.lay_out(participation=p, phase="test")
    reply = api.delete(f"/api/attention-checks/{check.pk}/")
    assert reply.status_code == 400 and "already have this check" in reply.json()["detail"] + str(reply.json())
    reply = api.patch(f"/api/attention-checks/{check.pk}/", {"question": "?"}, content_type="application/json")
    assert reply.status_code == 400
    assert AttentionCheck.objects.filter(pk=check.pk).exists()


def test_the_api_needs_staff(client, study):
    assert client.get("/api/attention-checks/").status_code in (401, 403)


# --- Command and admin -------------------------------------------------------------------------


def test_the_command_generates_lists_and_reports(study):
    out = StringIO()
    call_command("attention_checks", study.slug, "--every", "3", stdout=out)
    assert "added 2 attention check(s)" in out.getvalue() and "item 6:" in out.getvalue()
    out = StringIO()
    call_command("attention_checks", study.slug, "--report", "--format", "csv", stdout=out)
    assert out.getvalue().splitlines() == [",".join(attention.reports.REPORT_FIELDS)]


def test_the_command_refuses_a_bad_definition_and_stores_nothing(study):
    with pytest.raises(CommandError, match="position 40 is beyond the test set"):
        call_command(
            "attention_checks", study.slug, "--add", "40", "--context", "x", "--question", "y", "--label", "positive"
        )
    with pytest.raises(CommandError, match="no study"):
        call_command("attention_checks", "missing")
    assert not AttentionCheck.objects.exists()


def test_the_admin_action_adds_template_checks_every_n_items(admin_client, study):
    reply = admin_client.post(
        reverse("admin:annotation_study_changelist"),
        {"action": "add_template_attention_checks", "_selected_action": [study.pk], "attention_every": "2"},
        follow=True,
    )
    assert "added 3 attention check(s)" in reply.content.decode()
    assert list(study.attention_checks.values_list("position", flat=True)) == [2, 4, 6]


def test_the_admin_study_page_shows_checks_and_preview_links(admin_client, study):
    attention.definitions.generate(study=study, positions=[1])
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert "Attention checks" in page and "Preview as worker" in page
    assert f"/work/preview/{study.slug}/?shots=10" in page


def test_the_admin_inline_refuses_a_label_outside_the_task(admin_client, study):
    from tests.studies.test_admin import _change_data

    data = _change_data(study)
    data.update(
        {
            "attention_checks-TOTAL_FORMS": 1,
            "attention_checks-0-position": 2,
            "attention_checks-0-context": "Read.",
            "attention_checks-0-question": "Choose 'maybe'.",
            "attention_checks-0-expected_label": "maybe",
            "attention_checks-0-expected_spans": "",
        }
    )
    reply = admin_client.post(reverse("admin:annotation_study_change", args=[study.pk]), data)
    # A choice of the task's labels, not free text: "maybe" is not among them.
    assert reply.status_code == 200 and "Select a valid choice" in reply.content.decode()
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert '<option value="negative">negative</option>' in page
    assert not AttentionCheck.objects.exists()
    data["attention_checks-0-expected_label"] = "negative"
    reply = admin_client.post(reverse("admin:annotation_study_change", args=[study.pk]), data)
    assert reply.status_code == 302
    (check,) = AttentionCheck.objects.all()
    assert (check.position, check.example.gold_answers) == (2, ["negative"])


def test_the_admin_inline_takes_a_span_checks_words_as_lines_not_json(admin_client, make_study):
    from tests.studies.test_admin import _change_data

    study = make_study(for_task=make_span_task(slug="sp-admin"), shots=[0])
    data = _change_data(study, condition_shots=["0"])
    data.update(
        {
            "conditions-TOTAL_FORMS": 1,
            "conditions-INITIAL_FORMS": 1,
            "attention_checks-TOTAL_FORMS": 1,
            "attention_checks-0-position": 1,
            "attention_checks-0-context": "The orange sat by the river .",
            "attention_checks-0-question": "Select the words orange and river.",
            "attention_checks-0-expected_label": "",
            "attention_checks-0-expected_spans": "orange\r\nriver\r\n",
        }
    )
    reply = admin_client.post(reverse("admin:annotation_study_change", args=[study.pk]), data)
    assert reply.status_code == 302, reply.content.decode()[-3000:]
    (check,) = AttentionCheck.objects.all()
    assert check.expected_spans == ["orange", "river"]
    page = admin_client.get(reverse("admin:annotation_study_change", args=[study.pk])).content.decode()
    assert "orange\nriver</textarea>" in page and '["orange"' not in page


def test_the_study_api_sets_the_attention_rule(admin_client, study):
    reply = admin_client.patch(
        f"/api/studies/{study.pk}/",
        {"attention_fail_limit": 2, "attention_action": "exclude"},
        content_type="application/json",
    )
    assert reply.status_code == 200, reply.content
    study.refresh_from_db()
    assert (study.attention_fail_limit, study.attention_action) == (2, Study.AttentionAction.EXCLUDE)
