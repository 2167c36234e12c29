"""FewCLUE's design: seeded samples drawn once per condition, create_fewclue_studies, a replacement worker on
the same items, and the refusals (a sample larger than its set, an unknown set, a change of design)."""

from datetime import timedelta
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from annotation.models import Participation, Study
from annotation.reporting.agreement import strict_majority
from annotation.services.admission.abandonment import release_abandoned
from annotation.services.session import samples
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tasks_app.models import Task
from tests import entry_link
from tests.conftest import FEWCLUE_FIXTURE
from tests.team import team_member

pytestmark = pytest.mark.django_db


@pytest.fixture
def fewclue():
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())


def _create(*args):
    out, err = StringIO(), StringIO()
    call_command("create_fewclue_studies", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_a_draw_is_fixed_by_its_seed_and_keeps_the_sets_order():
    ids = list(range(100, 200))
    first = samples.draw(ids, 10, seed=3, stream="test_sample")
    assert first == samples.draw(ids, 10, seed=3, stream="test_sample") == sorted(first)
    assert len(set(first)) == 10 and set(first) <= set(ids)
    assert first != samples.draw(ids, 10, seed=4, stream="test_sample")
    assert first != samples.draw(ids, 10, seed=3, stream="training_sample")  # two streams of one seed


@pytest.mark.parametrize("k", [0, -1, 4, True, "2"])
def test_a_draw_of_no_items_or_more_than_the_set_is_refused(k):
    with pytest.raises(ValidationError) as raised:
        samples.draw([1, 2, 3], k, seed=1, stream="test_sample")
    assert "test_sample" in raised.value.message_dict


def test_the_readme_protocol_trains_on_the_training_set_and_labels_the_validation_set(fewclue):
    # The README: 30 items of the training set (训练集), then 100 items of the validation set (验证集), which the
    # README's file list names dev_few_all ("合并后的验证集", the merged validation set).
    out, _ = _create("--protocol", "readme", "--training-items", "5", "--test-sample", "10", "--tasks", "eprstmt")
    assert "fewclue-eprstmt-readme: created (draft)" in out and "test items from dev_few_all" in out
    study = Study.objects.get(slug="fewclue-eprstmt-readme")
    condition = study.conditions.get()
    assert study.protocol == Study.Protocol.FEWCLUE_README and study.status == Study.Status.DRAFT
    assert condition.training_set.name == "train_few_all" and condition.sample_seed is not None
    assert condition.test_set.name == "dev_few_all"
    # K equal to the validation set's size is the whole set, in its order (the fixture's sets share no item).
    dev = Task.objects.get(slug="fewclue-eprstmt").example_sets.get(name="dev_few_all")
    assert condition.test_sample == samples.set_ids(dev.pk)
    assert "of the 10 items of dev_few_all" in samples.describe(condition)
    assert _create("--protocol", "readme", "--tasks", "eprstmt")[0].startswith("fewclue-eprstmt-readme: exists")


def test_samples_larger_than_the_fixture_are_refused_with_the_reason_and_nothing_written(fewclue):
    with pytest.raises(CommandError, match="No FewCLUE study could be created"):
        _create("--tasks", "eprstmt", "ocnli")  # the defaults: 30 training items, 100 test items
    assert not Study.objects.exists()
    out, err = StringIO(), StringIO()
    with pytest.raises(CommandError):
        call_command("create_fewclue_studies", "--test-sample", "50", "--training-items", "5", stdout=out, stderr=err)
    assert "skipped eprstmt: Cannot draw 50 items from a set of 3." in err.getvalue()


def test_unknown_tasks_and_sets_are_refused(fewclue):
    with pytest.raises(CommandError, match="unknown \\['sst2'\\]"):
        _create("--tasks", "sst2")
    task = Task.objects.get(slug="fewclue-ocnli")
    with pytest.raises(ValidationError, match="no set named 'dev_9'"):
        studies.create_sampled_design(
            task=task,
            protocol=Study.Protocol.FEWCLUE_PAPER,
            training_set_name="dev_9",
            training_items=2,
            test_sample_size=2,
            slug="x",
        )


def test_a_sampled_studys_design_cannot_change(fewclue):
    _create("--training-items", "5", "--test-sample", "2", "--tasks", "ocnli")
    study = Study.objects.get(slug="fewclue-ocnli-paper")
    with pytest.raises(ValidationError, match="create a new study"):
        studies.study_update(study=study, shots=[0, 5])
    studies.study_update(study=study, name="renamed")  # other settings still change
    studies.change_status(study=study, to_status=Study.Status.OPEN)
    assert Study.objects.get(pk=study.pk).status == Study.Status.OPEN


def _join(worker_id, slug):
    client = Client()
    assert entry_link.take_part(client, slug, {"worker_id": worker_id}).status_code == 302
    assert client.post("/api/session/start/", content_type="application/json").status_code == 200
    return client


def test_a_replacement_worker_takes_over_the_same_sample(fewclue):
    _create(
        "--training-items",
        "2",
        "--test-sample",
        "2",
        "--seed",
        "11",
        "--tasks",
        "ocnli",
        "--open",
        "--posted-reward",
        "1.50",
    )
    study = Study.objects.get(slug="fewclue-ocnli-paper")
    Study.objects.filter(pk=study.pk).update(workers_per_condition=1)
    condition = study.conditions.get()
    first = _join("first", study.slug)
    assert first.get("/api/session/current/").json()["item"]["phase"] == "training"
    gone = Participation.objects.get(worker__external_id="first")
    Participation.objects.filter(pk=gone.pk).update(last_activity_at=timezone.now() - timedelta(hours=2))
    assert release_abandoned() == 1
    client = _join("second", study.slug)
    replacement = Participation.objects.get(worker__external_id="second")
    assert replacement.condition_id == condition.pk
    while (item := client.get("/api/session/current/").json()["item"]) is not None:
        body = {"item": item["item"], "label": "neutral", "confidence": 3}
        assert client.post("/api/session/submit/", body, content_type="application/json").status_code == 200
    tested = replacement.responses.filter(phase="test").order_by("position").values_list("example_id", flat=True)
    trained = replacement.responses.filter(phase="training").order_by("position").values_list("example_id", flat=True)
    assert list(tested) == condition.test_sample and list(trained) == condition.training_sample


def test_a_strict_majority_needs_more_than_half_of_the_votes():
    a, b, c = frozenset({"a"}), frozenset({"b"}), frozenset({"c"})
    assert strict_majority([a, a, b]) == a
    assert strict_majority([a, b, c]) is None
    assert strict_majority([a, b]) is None
    assert strict_majority([a]) == a
    assert strict_majority([]) is None


def test_attention_checks_take_positions_within_the_test_sample(fewclue):
    _create("--training-items", "2", "--test-sample", "2", "--tasks", "csldcp")  # a test set of 3 items
    study = Study.objects.get(slug="fewclue-csldcp-paper")
    assert attention.definitions.test_set_size(study) == 2
    assert attention.definitions.positions_every(study, 1) == [1, 2]


@pytest.mark.fewclue
@pytest.mark.timeout(900)
def test_the_papers_design_on_the_real_release(fewclue_dir):
    """With FEWCLUE_DIR: the defaults (30 development items, 100 test items, three workers) fit every task."""
    call_command("import_fewclue", str(fewclue_dir), stdout=StringIO())
    out, err = _create("--seed", "20211206")
    assert out.count(": created (draft)") == 9 and not err
    for study in Study.objects.select_related("task"):
        condition = study.conditions.get()
        assert (condition.training_set.name, condition.shots, study.workers_per_condition) == ("dev_few_all", 30, 3)
        assert len(condition.training_sample) == 30 and len(condition.test_sample) == 100
        studies.change_status(study=study, to_status=Study.Status.OPEN)


def test_a_staff_preview_rehearses_the_conditions_samples(fewclue):
    _create("--training-items", "3", "--test-sample", "2", "--tasks", "ocnli", "--open", "--posted-reward", "1.50")
    condition = Study.objects.get(slug="fewclue-ocnli-paper").conditions.get()
    staff = Client()
    staff.force_login(team_member("staff", "assistant"))
    assert staff.get("/work/preview/fewclue-ocnli-paper/?shots=3").status_code == 302
    assert staff.post("/api/session/start/", content_type="application/json").status_code == 200
    while (item := staff.get("/api/session/current/").json()["item"]) is not None:
        body = {"item": item["item"], "label": "neutral", "confidence": 3}
        assert staff.post("/api/session/submit/", body, content_type="application/json").status_code == 200
    p = Participation.all_objects.get(is_preview=True)
    responses = p.responses(manager="all_objects").order_by("position")
    by_phase = {
        phase: list(responses.filter(phase=phase).values_list("example_id", flat=True))
        for phase in ("training", "test")
    }
    assert by_phase == {"training": condition.training_sample, "test": condition.test_sample}


def test_the_admin_shows_a_fewclue_study_with_its_protocol_and_sample(fewclue, admin_client):
    _create("--training-items", "3", "--test-sample", "2", "--tasks", "ocnli", "--seed", "9")
    study = Study.objects.get(slug="fewclue-ocnli-paper")
    page = admin_client.get(f"/admin/annotation/study/{study.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "FewCLUE paper (6.1)" in text and "dev_few_all" in text
    api = admin_client.get(f"/api/studies/{study.pk}/").json()
    assert (api["protocol"], api["test_sample_size"]) == ("fewclue-paper", 2)
    assert api["conditions"][0]["sample_seed"] == 9 and len(api["conditions"][0]["test_sample"]) == 2
