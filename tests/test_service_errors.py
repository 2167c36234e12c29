"""One base for every service's refusal (annotation.errors.ServiceError), answered in one place by the API."""

import subprocess
import sys

from annotation.api.errors import exception_handler
from annotation.errors import ServiceError
from annotation.protocol import offsets
from annotation.reporting.options import ReportError
from annotation.services.admission import closing, consent, survey
from annotation.services.prolific import operations
from annotation.services.session import answers, reveal, steps
from annotation.services.state import lifecycle, platforms
from annotation.services.studies import preview
from annotation.services.verdicts import attention

# Every refusal a service raises, with the code and status the API answers (those the tests of each route
# pin too). Codes set per instance (AnswerError, ConsentError) show the class's status.
EXPECTED = {
    answers.InvalidAnswer: 400,
    answers.NotYourItem: 403,
    answers.NotCurrentItem: 409,
    answers.NotInStep: 409,
    answers.SkipNotAllowed: 409,
    answers.AlreadyLocked: 409,
    reveal.RevealNotAllowed: 403,
    reveal.NotLockedYet: 409,
    closing.StudyClosed: 409,
    consent.ConsentError: 409,
    survey.InvalidSurveyAnswers: 400,
    survey.SurveyNotDue: 409,
    steps.StepUnavailable: 409,
    attention.definitions.AttentionCheckError: 400,
    ReportError: 400,
    preview.NoSuchCondition: 400,
    lifecycle.InvalidTransition: 409,
    operations.ProlificDisabled: 409,
    operations.UnknownOperation: 404,
    platforms.BadEntry: 400,
    offsets.OffsetError: 400,
}


def _all_subclasses(cls: type) -> set[type]:
    return {sub for direct in cls.__subclasses__() for sub in {direct, *_all_subclasses(direct)}}


def test_every_service_refusal_derives_from_the_base_with_a_code_and_a_status():
    for cls, status in EXPECTED.items():
        assert issubclass(cls, ServiceError) and cls.status == status, cls
        assert isinstance(cls.code, str) and cls.code, cls
    for cls in _all_subclasses(ServiceError):
        if cls.__module__.startswith("annotation."):
            assert 400 <= cls.status < 600, cls


def test_the_base_lives_below_the_models():
    code = (
        "import sys, annotation.errors; "
        "print(sorted(m for m in sys.modules if m.startswith(('annotation.m', 'django.db'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_refusal_is_answered_with_its_code_status_and_own_keys():
    response = exception_handler(answers.AlreadyLocked({"label": "positive"}), {})
    assert response is not None and response.status_code == 409
    assert response.data == {
        "error": "already_locked",
        "detail": "this item's answer is already locked and cannot be changed",
        "answer": {"label": "positive"},
    }
    response = exception_handler(survey.InvalidSurveyAnswers({"age": "Give a number."}), {})
    assert response is not None and response.status_code == 400
    assert response.data == {
        "error": "invalid_survey",
        "detail": "age: Give a number.",
        "errors": {"age": "Give a number."},
    }
    response = exception_handler(steps.StepUnavailable("no step now"), {})
    assert response is not None and (response.status_code, response.data) == (
        409,
        {"error": "step_unavailable", "detail": "no step now"},
    )


def test_an_invalid_refusal_carries_its_fields_as_a_validation_error_does():
    response = exception_handler(attention.definitions.AttentionCheckError("position", "Taken."), {})
    assert response is not None and response.status_code == 400
    assert response.data == {"error": "invalid", "detail": "position: Taken.", "fields": {"position": ["Taken."]}}
    response = exception_handler(ReportError("unknown study 'x'"), {})
    assert response is not None and response.status_code == 400
    assert response.data == {
        "error": "invalid",
        "detail": "unknown study 'x'",
        "fields": {"non_field_errors": ["unknown study 'x'"]},
    }


def test_an_error_that_is_no_refusal_is_left_to_django():
    assert exception_handler(RuntimeError("a bug"), {}) is None
