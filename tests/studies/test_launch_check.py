"""The launch check (annotation.services.studies.launch): what blocks a study's launch and what deserves a look,
the same list from every door (check_study, the admin, the dashboard, the API), the refusal to open with a
blocker and the recorded override, and the CLI flags that switch the quality controls on."""

import json
from decimal import Decimal
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotation.models import LaunchOverride, Study
from annotation.services.studies import launch
from annotation.services.verdicts import attention
from tests.factories import ConditionFactory, StudyFactory, make_classification_task

pytestmark = pytest.mark.django_db
EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"


def _run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def draft(task, make_study):
    return make_study(status=Study.Status.DRAFT, shots=(0, 10))


def _codes(findings) -> list[str]:
    return [f.code for f in findings]


@pytest.mark.parametrize(
    ("language", "left"),
    [
        ("en", ["[N]", "[£X.XX]", "[£Y.YY]", "[researcher name, email]", "[board, reference]"]),
        ("de", ["[N]", "[X,XX €]", "[Y,YY €]", "[Name, E-Mail der Forschenden]", "[Kommission, Aktenzeichen]"]),
        ("zh-hans", ["[N]", "[£X.XX]", "[£Y.YY]", "[研究人员姓名、电子邮箱]", "[审查委员会、批准编号]"]),
    ],
)
def test_the_example_consents_placeholders_block_the_launch(draft, language, left):
    call_command("configure_study", draft.slug, "--consent-file", str(EXAMPLES / f"consent.{language}.md"))
    check = launch.launch_check(Study.objects.get(pk=draft.pk))
    placeholder = next(f for f in check.blockers if f.code == "placeholder")
    for text in left:
        assert f"'{text}' in the consent" in placeholder.message
    assert f"configure_study {draft.slug} --consent-file" in placeholder.fix


def test_placeholders_as_the_old_examples_wrote_them_and_in_the_survey_are_found_too(draft):
    Study.objects.filter(pk=draft.pk).update(
        consent_required=True,
        consent_text="Paid **£X.XX** (at least £Y.YY per hour). Questions: *researcher name, email*. "
        "A [link](https://example.org) and a box [ ] are text.",
        survey=[{"key": "age", "type": "single", "label": "Your age [range]", "options": ["young", "old"]}],
    )
    check = launch.launch_check(Study.objects.get(pk=draft.pk))
    message = next(f for f in check.blockers if f.code == "placeholder").message
    assert "'£X.XX' in the consent" in message and "'£Y.YY' in the consent" in message
    assert "'researcher name, email' in the consent" in message and "'[range]' in survey question age" in message
    assert "link" not in message and "[ ]" not in message


def test_no_posted_reward_blocks_and_names_the_command_that_sets_it(draft):
    check = launch.launch_check(draft)
    assert _codes(check.blockers) == ["no_posted_reward"] and not check.ready
    assert check.blockers[0].fix.startswith(f"manage.py configure_study {draft.slug} --posted-reward AMOUNT")
    call_command("configure_study", draft.slug, "--posted-reward", "1.50", stderr=StringIO())
    assert launch.launch_check(Study.objects.get(pk=draft.pk)).ready


@pytest.mark.parametrize(
    ("currency", "reward", "rate", "consent", "wrong"),
    [
        # What the consent says the worker is paid must be what the study posts and tops up to.
        ("GBP", "1.50", "9.00", "You are paid **£2.00** (at least £9.00 per hour).", "'£2.00' in the consent"),
        ("GBP", "1.50", "9.00", "You are paid **1.50 USD** (at least £9.00 per hour).", "is in USD"),
        ("GBP", "1.50", "9.00", "You are paid £1.50 (at least £12.00 per hour).", "'£12.00' per hour"),
        ("EUR", "1.50", "9.00", "Sie erhalten **1,50 €** (mindestens 10,00 € pro Stunde).", "'10,00 €' per hour"),
        ("CNY", "10.00", "60.00", "获得 **¥12.00** 的报酬（每小时至少 ¥60）。", "'¥12.00' in the consent"),
    ],
)
def test_a_consent_promising_another_pay_blocks(draft, currency, reward, rate, consent, wrong):
    Study.objects.filter(pk=draft.pk).update(
        consent_required=True,
        consent_text=consent,
        currency=currency,
        base_reward=Decimal(reward),
        hourly_rate=Decimal(rate),
    )
    check = launch.launch_check(Study.objects.get(pk=draft.pk))
    [finding] = [f for f in check.blockers if f.code == "consent_pay"]
    assert wrong in finding.message and "--posted-reward" in finding.fix


@pytest.mark.parametrize(
    ("currency", "consent"),
    [
        ("GBP", "You are paid **£1.50** (at least £9.00 per hour), or **£1.5** as the platform shows it."),
        ("EUR", "Sie erhalten **1,50 €** (mindestens 8,00 € pro Stunde)."),
        ("CNY", "获得 **¥1.50** 的报酬（每小时至少 ¥9）。"),
        ("USD", "It takes about 7 minutes; 3 of 10 items are training."),  # no amount: nothing to compare
    ],
)
def test_a_consent_stating_the_studys_pay_passes(draft, currency, consent):
    Study.objects.filter(pk=draft.pk).update(
        consent_required=True,
        consent_text=consent,
        currency=currency,
        base_reward=Decimal("1.50"),
        hourly_rate=Decimal("9.00"),
    )
    assert "consent_pay" not in _codes(launch.launch_check(Study.objects.get(pk=draft.pk)).blockers)


def test_a_translated_consent_is_held_to_the_same_pay(draft):
    Study.objects.filter(pk=draft.pk).update(
        consent_required=True,
        consent_text="You are paid £1.50.",
        currency="GBP",
        base_reward=Decimal("1.50"),
        translations={"de": {"consent_text": "Sie erhalten 2,00 £."}},
    )
    [finding] = [f for f in launch.launch_check(Study.objects.get(pk=draft.pk)).blockers if f.code == "consent_pay"]
    assert "'2,00 £' in the de consent" in finding.message


def test_texts_missing_in_the_studys_language_block():
    task = make_classification_task(slug="bare")
    study = StudyFactory(task=task, language="de", status=Study.Status.DRAFT, base_reward=Decimal("1"))
    ConditionFactory(study=study, shots=0)
    blocker = next(f for f in launch.launch_check(study).blockers if f.code == "missing_texts")
    assert "(de)" in blocker.message and "de.description" in blocker.message


def test_a_condition_longer_than_the_consent_says_blocks(draft):
    # 6 test items, 10 training in the 10-shot condition; SST-2's default is 10 s an item.
    Study.objects.filter(pk=draft.pk).update(
        consent_required=True, consent_text="It takes about 2 minutes.", base_reward=Decimal("1")
    )
    check = launch.launch_check(Study.objects.get(pk=draft.pk))
    assert _codes(check.blockers) == ["too_long"]  # the 0-shot condition: 6 x 10 s = 1 minute, within 2
    assert "The 10-shot condition asks 16 items (10 training, 6 test), about 3 minutes" in check.blockers[0].message
    assert "the consent says 2 minutes" in check.blockers[0].message


def test_quality_controls_off_and_no_ethics_reference_deserve_a_look_and_the_flags_turn_them_on(draft):
    attention.definitions.generate(study=draft, positions=[2])
    looks = launch.launch_check(draft).looks
    assert _codes(looks) == ["no_fail_limit", "no_integrity_rule", "no_ethics_reference"]
    assert looks[0].fix == f"manage.py attention_checks {draft.slug} --fail-limit N [--action exclude]"

    call_command(
        "attention_checks", draft.slug, "--fail-limit", "1", "--action", "exclude", stdout=StringIO(), stderr=StringIO()
    )
    call_command(
        "configure_study",
        draft.slug,
        "--integrity-max-fast-share", "0.5",
        "--integrity-action", "review",
        "--ethics-review", "approved",
        "--ethics-board", "University board",
        "--ethics-reference", "2026-17",
        stderr=StringIO(),
    )  # fmt: skip
    study = Study.objects.get(pk=draft.pk)
    assert (study.attention_fail_limit, study.attention_action) == (1, "exclude")
    assert (study.integrity_max_fast_share, study.ethics_reference) == (0.5, "2026-17")
    assert launch.launch_check(study).looks == []


@pytest.mark.parametrize(("args", "message"), [(["--fail-limit", "-1"], r"0 \(no rule\) or more")])
def test_a_bad_fail_limit_is_refused(draft, args, message):
    with pytest.raises(CommandError, match=message):
        call_command("attention_checks", draft.slug, *args)


def test_check_study_lists_both_and_opening_needs_the_recorded_override(draft):
    text = _run("check_study", draft.slug)
    assert "BLOCKS the launch (1):\n- No posted reward" in text and "Deserves a look (2):" in text
    as_json = json.loads(_run("check_study", draft.slug, "--format", "json"))
    assert as_json["ready"] is False and [b["code"] for b in as_json["blockers"]] == ["no_posted_reward"]
    with pytest.raises(CommandError, match="1 blocker"):
        call_command("check_study", draft.slug, "--strict", stdout=StringIO())
    with pytest.raises(CommandError, match="--open --override-blockers"):
        call_command("check_study", draft.slug, "--open", stdout=StringIO())
    assert Study.objects.get(pk=draft.pk).status == Study.Status.DRAFT and not LaunchOverride.objects.exists()

    call_command(
        "check_study",
        draft.slug,
        "--open",
        "--override-blockers",
        "--by",
        "A. Researcher",
        stdout=StringIO(),
        stderr=StringIO(),
    )
    assert Study.objects.get(pk=draft.pk).status == Study.Status.OPEN
    override = LaunchOverride.objects.get()
    assert (override.study_id, override.by_name, override.by) == (draft.pk, "A. Researcher", None)
    assert [b["code"] for b in override.blockers] == ["no_posted_reward"] and override.at is not None


def test_a_study_without_blockers_opens_with_no_override_and_a_paused_one_reopens(draft):
    Study.objects.filter(pk=draft.pk).update(base_reward=Decimal("0"))
    opened = launch.open_study(study=Study.objects.get(pk=draft.pk))
    assert opened.status == Study.Status.OPEN and not LaunchOverride.objects.exists()
    Study.objects.filter(pk=draft.pk).update(status=Study.Status.PAUSED, base_reward=None)
    assert launch.open_study(study=Study.objects.get(pk=draft.pk)).status == Study.Status.OPEN  # not a launch


def test_the_admin_page_shows_the_check_and_records_who_overrode(admin_client, draft):
    page = admin_client.get(reverse("admin:annotation_study_change", args=[draft.pk])).content.decode()
    assert 'id="launch-check"' in page and "No posted reward" in page and 'id="override-blockers"' in page
    url = reverse("admin:annotation_study_status", args=[draft.pk])
    refused = admin_client.post(url, {"to_status": "open"}, follow=True)
    assert any("not opened: No posted reward" in str(m) for m in refused.context["messages"])
    assert Study.objects.get(pk=draft.pk).status == Study.Status.DRAFT
    admin_client.post(url, {"to_status": "open", "override_blockers": "1"})
    assert Study.objects.get(pk=draft.pk).status == Study.Status.OPEN
    override = LaunchOverride.objects.get()
    assert override.by.username == "admin" and override.by_name == "admin"
    page = admin_client.get(reverse("admin:annotation_study_change", args=[draft.pk])).content.decode()
    assert "by admin over 1 blocker: no_posted_reward." in page


def test_the_api_gives_the_check_and_refuses_to_open_without_the_override(draft):
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.create_superuser("api", password="pw"))
    body = client.get(f"/api/studies/{draft.pk}/launch-check/").json()
    assert body["ready"] is False and body["blockers"][0]["code"] == "no_posted_reward"
    url = f"/api/studies/{draft.pk}/status/"
    refused = client.post(url, {"status": "open"}, content_type="application/json")
    assert refused.status_code == 400 and "launch blocker" in json.dumps(refused.json())
    opened = client.post(url, {"status": "open", "override_blockers": True}, content_type="application/json")
    assert opened.status_code == 200 and opened.json()["status"] == "open"
    assert LaunchOverride.objects.get().by.username == "api"


def test_the_dashboard_shows_the_check_and_says_when_quality_controls_are_off(admin_client, make_study):
    study = make_study(shots=(0,))
    attention.definitions.generate(study=study, positions=[2])
    page = admin_client.get(reverse("dashboard:study", args=[study.slug])).content.decode()
    assert 'id="launch-check"' in page and 'data-code="no_posted_reward"' in page
    assert 'data-kind="quality-off"' in page and "Quality controls are off" in page
    assert "no fail limit: failures are only reported, nobody is screened" in page


def test_the_creation_commands_open_only_what_nothing_blocks(task):
    out, err = StringIO(), StringIO()
    call_command("create_clues_studies", "--split", "1", "--open", stdout=out, stderr=err)
    assert "clues-sst2-split1: created (draft)" in out.getvalue()
    assert "clues-sst2-split1: not opened: No posted reward" in err.getvalue()
    assert Study.objects.get(slug="clues-sst2-split1").base_reward is None


def test_the_api_creates_and_opens_a_standard_design_only_when_nothing_blocks(admin_client, task):
    url = "/api/studies/standard-design/"
    refused = admin_client.post(url, {"task": task.slug, "open": True}, content_type="application/json")
    assert refused.status_code == 400 and "No posted reward" in json.dumps(refused.json())
    assert not Study.objects.exists()  # all or nothing
    made = admin_client.post(
        url, {"task": task.slug, "open": True, "base_reward": "1.50"}, content_type="application/json"
    )
    assert made.status_code == 201 and made.json()["status"] == "open"
    assert Study.objects.get().base_reward == Decimal("1.50") and not LaunchOverride.objects.exists()
