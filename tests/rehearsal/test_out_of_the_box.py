"""Out of the box, a rehearsal passes: a FewCLUE study as create_fewclue_studies makes it (no posted reward yet)
is rehearsed to the end with exit 0, and the missing reward is named once, up front, with the command that sets
it. (The demo, which posts a reward, is rehearsed through the dashboard's button: tests/dashboard.)"""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from tests.conftest import FEWCLUE_FIXTURE

# transactional_db: no test transaction around the run, so that PostgreSQL can CREATE the scratch database.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.timeout(600)]


def test_a_fewclue_study_as_created_rehearses_with_exit_0_naming_the_missing_reward_once(tmp_path):
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    call_command(
        "create_fewclue_studies", "--tasks", "eprstmt", "--training-items", "3", "--test-sample", "2", "--seed", "9",
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    study = Study.objects.get(slug="fewclue-eprstmt-paper")
    assert study.base_reward is None and study.status == Study.Status.DRAFT
    out, log = tmp_path / "report.md", StringIO()
    call_command("rehearse_study", study.slug, "-o", str(out), stdout=StringIO(), stderr=log)  # no CommandError
    markdown = out.read_text(encoding="utf-8")
    assert markdown.startswith("# Rehearsal of fewclue-eprstmt-paper: every invariant holds"), markdown[:3000]
    assert markdown.count("No posted reward") == 1 and "--posted-reward AMOUNT" in markdown
    assert "the copy assumed base_reward = 0.00" in markdown
    assert log.getvalue().count("No posted reward") == 1  # the run's log says it once, before anything runs
    assert log.getvalue().index("No posted reward") < log.getvalue().index("scratch database")
