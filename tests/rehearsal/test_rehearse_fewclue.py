"""The rehearsal of a FewCLUE CLUEWSC study on the real data (../shared/fewclue/datasets or FEWCLUE_DIR):
CLUEWSC's items share a text and mark other spans, and the simulated crowd keys its gold by the item as
shown, so a careful worker's measured score is the accuracy it was simulated with (within 5 points)."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study

pytestmark = [pytest.mark.fewclue, pytest.mark.django_db(transaction=True), pytest.mark.timeout(900)]


def test_careful_workers_score_what_they_were_simulated_with(fewclue_dir, tmp_path):
    call_command("import_fewclue", str(fewclue_dir), "--task", "cluewsc", stdout=StringIO())
    call_command("create_fewclue_studies", "--tasks", "cluewsc", "--seed", "20211206", stdout=StringIO())
    Study.objects.filter(slug="fewclue-cluewsc-paper").update(
        consent_required=True, consent_text="你将判断代词的指代。", base_reward="1.50"
    )
    out = tmp_path / "report.json"
    call_command(
        "rehearse_study", "fewclue-cluewsc-paper", "--workers-per-condition", "9", "--format", "json", "-o", str(out)
    )
    report = json.loads(out.read_text())
    careful = [w for w in report["crowd"] if w["behaviour"] == "careful" and w["measured"] is not None]
    assert len(careful) >= 2
    simulated = sum(w["p_gold"] for w in careful) / len(careful)
    measured = sum(w["measured"] for w in careful) / len(careful)
    assert abs(measured - simulated) <= 0.05, (simulated, measured)
    assert all(w["unknown_gold"] == 0 for w in report["crowd"])
