"""Management commands: ensure_admin, load_demo, create_clues_studies, export_participants."""

from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from annotation.models import Study
from tasks_app.catalog import CLUES_TASKS
from tests.factories import ParticipationFactory, WorkerFactory, make_classification_task

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _run(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_ensure_admin_creates_then_updates_the_superuser():
    out, _ = _run("ensure_admin", "--username", "admin", "--password", "first-Strong-pass")
    assert "Created superuser 'admin'" in out and "/admin/" in out
    user = get_user_model().objects.get(username="admin")
    user.is_superuser = False
    user.save()
    out, _ = _run("ensure_admin", "--username", "admin", "--password", "second-Strong-pass")
    assert "Updated" in out
    user.refresh_from_db()
    assert user.is_superuser and user.is_staff and user.check_password("second-Strong-pass")
    assert get_user_model().objects.count() == 1


def test_ensure_admin_refuses_an_empty_password():
    with pytest.raises(CommandError):
        _run("ensure_admin", "--username", "admin", "--password", "")


@pytest.mark.parametrize("weak", ["…", "admin", "12345678", "password"])
def test_ensure_admin_refuses_a_weak_password_and_changes_nothing(weak):
    with pytest.raises(CommandError, match="The password is refused"):
        _run("ensure_admin", "--username", "admin", "--password", weak)
    assert not get_user_model().objects.exists()


def test_ensure_admin_takes_the_demos_admin_admin_only_with_the_demo_flag():
    _run("ensure_admin", "--demo", "--username", "admin", "--password", "admin")
    assert get_user_model().objects.get(username="admin").check_password("admin")
    assert "--demo" in (ROOT / "scripts" / "run_demo.sh").read_text()


def test_ensure_admin_without_a_password_makes_a_strong_one_and_prints_it_once():
    out, _ = _run("ensure_admin", "--username", "admin")
    password = out.split("the password '")[1].split("'")[0]
    assert len(password) >= 16 and get_user_model().objects.get(username="admin").check_password(password)


def test_load_demo_opens_one_standard_study_per_task_and_is_idempotent():
    out, err = _run("load_demo")
    slugs = {f"demo-{t.slug}" for t in CLUES_TASKS}
    assert set(Study.objects.values_list("slug", flat=True)) == slugs, err
    assert set(Study.objects.values_list("status", flat=True)) == {"open"}
    assert {s.conditions.count() for s in Study.objects.all()} == {4}
    assert "/join/demo-sst2/?worker_id=" in out
    _run("load_demo")
    assert Study.objects.count() == 6


def test_load_demo_refuses_a_database_with_other_studies_and_changes_nothing():
    make_classification_task(slug="sst2")
    _run("create_clues_studies", "--split", "1")
    before = list(Study.objects.values_list("slug", flat=True))
    with pytest.raises(CommandError, match="the demo keeps to its own database"):
        _run("load_demo")
    assert list(Study.objects.values_list("slug", flat=True)) == before


def test_create_clues_studies_makes_what_it_can_and_says_what_it_skipped():
    make_classification_task(slug="sst2")
    out, err = _run("create_clues_studies", "--split", "1", "--open", "--posted-reward", "1.50")
    study = Study.objects.get()
    assert (study.slug, study.status) == ("clues-sst2-split1", "open")
    assert "clues-sst2-split1: created (open)" in out
    assert "skipped mnli" in err
    out, _ = _run("create_clues_studies", "--split", "1")
    assert "clues-sst2-split1: exists (open)" in out and Study.objects.count() == 1


def test_create_clues_studies_gives_an_existing_study_the_language_asked_for_until_workers_join():
    make_classification_task(slug="sst2")
    _run("create_clues_studies", "--split", "1")
    assert Study.objects.get().language == ""
    out, _ = _run("create_clues_studies", "--split", "1", "--language", "de")
    assert "clues-sst2-split1: exists, language set to de (draft)" in out
    assert Study.objects.get().language == "de"
    out, _ = _run("create_clues_studies", "--split", "1")  # no --language: the study's own is kept
    assert "clues-sst2-split1: exists (draft)" in out and Study.objects.get().language == "de"
    study = Study.objects.get()
    ParticipationFactory(condition=study.conditions.first(), state="test")
    out, _ = _run("create_clues_studies", "--split", "1", "--language", "en")
    assert "language de kept (workers have joined; --language en not applied)" in out
    assert Study.objects.get().language == "de"


def test_create_clues_studies_sets_the_training_filter_asked_for():
    make_classification_task(slug="sst2")
    _run(
        "create_clues_studies",
        "--split",
        "1",
        "--filter-rule",
        "relative",
        "--filter-threshold",
        "0.2",
        "--filter-reference",
        "median",
    )
    study = Study.objects.get()
    assert (study.filter_rule, study.filter_threshold, study.filter_reference) == ("relative", 0.2, "median")


def test_create_clues_studies_fails_when_nothing_can_be_created():
    with pytest.raises(CommandError, match="import the tasks first"):
        _run("create_clues_studies", "--split", "2")
    assert not Study.objects.exists()


def test_export_participants_to_stdout_and_to_a_file(tmp_path, make_study):
    study = make_study()
    ParticipationFactory(
        condition=study.conditions.get(shots=0), worker=WorkerFactory(platform="mturk", external_id="A7")
    )
    out, _ = _run("export_participants", "--task", "sst2", "--format", "mturk")
    assert out == "Worker ID,UPDATE-took-part-sst2\r\nA7,1\r\n"
    target = tmp_path / "p.txt"
    _run("export_participants", "--task", "sst2", "--format", "prolific", "-o", str(target))
    assert target.read_text() == ""
    with pytest.raises(CommandError, match="No task with slug 'nope'"):
        _run("export_participants", "--task", "nope", "--format", "mturk")


def test_load_demo_refuses_a_database_with_annotated_real_data_and_touches_nothing():
    from annotation.models import Response
    from annotation.services.session import steps
    from tests.worker.conftest import make_participation

    task = make_classification_task(slug="sst2")  # stands for a real release imported and annotated here
    p = make_participation(task, state="test")
    steps.lay_out(participation=p, phase=Response.Phase.TEST)
    answered = Response.objects.filter(participation=p).count()
    with pytest.raises(CommandError, match="its own database"):
        _run("load_demo")
    assert Response.objects.filter(participation=p).count() == answered
    assert not Study.objects.filter(slug__startswith="demo-").exists()


def test_configure_study_sets_the_posted_reward_and_refuses_a_non_amount():
    task = make_classification_task()
    study = Study.objects.create(task=task, slug="posted", name="Posted", split_number=1)
    assert study.base_reward is None  # not set: no bonus is computed (annotation.services.money.pay)
    _run("configure_study", "posted", "--posted-reward", "1.50")
    study.refresh_from_db()
    assert str(study.base_reward) == "1.50"
    with pytest.raises(CommandError, match="--posted-reward takes an amount"):
        _run("configure_study", "posted", "--posted-reward", "a lot")
    study.refresh_from_db()
    assert str(study.base_reward) == "1.50"  # nothing changed
