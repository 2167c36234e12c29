"""Survey answers and consent records in the exports: a plain header-first CSV and a JSON section."""

import csv
import io
import json

import pytest
from django.utils import timezone

from annotation.models import Participation, SurveyResponse
from annotation.reporting.exports import export_to_bytes
from annotation.reporting.options import MetricOptions
from annotation.services.admission import consent
from tests.factories import ConditionFactory, ParticipationFactory, StudyFactory, TaskFactory, WorkerFactory

pytestmark = pytest.mark.django_db
State = Participation.State
SURVEY = [
    {"key": "age", "type": "single", "label": "Age", "options": ["18-29", "30+"]},
    {"key": "langs", "type": "multiple", "label": "Languages", "options": ["English", "German"]},
]


@pytest.fixture
def study():
    study = StudyFactory(
        slug="sv", task=TaskFactory(slug="sst2"), survey=SURVEY, consent_required=True, consent_text="Yes?"
    )
    condition = ConditionFactory(study=study, shots=0)
    agreed = ParticipationFactory(
        condition=condition,
        worker=WorkerFactory(external_id="ann"),
        state=State.COMPLETED,
        consented_at=timezone.now(),
        consent_hash=consent.text_hash("Yes?"),
    )
    SurveyResponse.objects.create(
        participation=agreed,
        placement="after_test",
        answers={"age": "30+", "langs": ["English", "German"]},
        submitted_at=timezone.now(),
    )
    ParticipationFactory(
        condition=condition, slot_index=1, worker=WorkerFactory(external_id="bob"), state=State.DECLINED
    )
    ParticipationFactory(condition=condition, slot_index=2, worker=WorkerFactory(external_id="cy"), state=State.TEST)
    return study


def test_the_survey_csv_has_one_row_per_answering_participation_and_a_column_per_question(study):
    text = export_to_bytes(kind="survey-csv", studies=[study], options=MetricOptions()).decode()
    assert text.startswith("study,task,shots,platform,worker_id,state,consented_at,consent_sha256,")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert [r["worker_id"] for r in rows] == ["ann", "bob"]  # cy neither consented nor answered
    ann, bob = rows
    assert (ann["age"], ann["langs"], ann["survey_placement"]) == ("30+", "English; German", "after_test")
    assert ann["consent_sha256"] == consent.text_hash("Yes?") and ann["consented_at"]
    assert (bob["state"], bob["consented_at"], bob["age"]) == ("declined", "", "")


def test_the_survey_json_carries_the_definition_the_consent_hash_and_the_header(study):
    payload = json.loads(export_to_bytes(kind="survey-json", studies=[study], options=MetricOptions()))
    assert "app_version" in json.dumps(payload["meta"])
    (described,) = payload["survey"]["studies"]
    assert described["survey"] == SURVEY and described["consent_sha256"] == consent.text_hash("Yes?")
    assert payload["survey"]["rows"][0]["answers"] == {"age": "30+", "langs": ["English", "German"]}


def test_a_declined_participation_is_not_counted_as_in_progress(study):
    from annotation.reporting.scores import condition_summaries

    (summary,) = condition_summaries(studies=[study])
    assert [len(summary.completed), len(summary.in_progress)] == [1, 1]  # ann completed, cy at work; bob declined
