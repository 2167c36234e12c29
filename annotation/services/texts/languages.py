"""Which language a worker sees: the study's, or their browser's among the shipped languages.

The worker UI ships in ``settings.LANGUAGES`` (English, German, Simplified Chinese). A study's
``language`` is either a fixed code from that list or ``""`` (follow the
worker: Django's choice from the language cookie, then ``Accept-Language``,
then ``LANGUAGE_CODE``). Every worker-facing view activates the language of
the study it serves with ``activate_for_study``; requests outside a study (a
404, the no-session page) keep what ``annotation.web.locale.WorkerLocaleMiddleware``
chose from the browser. The choice costs no query: the study is already in
the request's worker read (``annotation.services.session.worker_sql``).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils import translation

from annotation.models import Study
from annotation.protocol.languages import shipped
from tasks_app.texts import missing_texts


def browser_language(request: HttpRequest) -> str:
    """The worker's own choice among the shipped languages: cookie, then Accept-Language, then the default."""
    return translation.get_language_from_request(request, check_path=False)


def language_for(study: Study | None, request: HttpRequest) -> str:
    """The language a worker of ``study`` sees (their browser's when the study follows it, or without one)."""
    if study is not None and study.language in shipped():
        return study.language
    return browser_language(request)


def activate_for_study(request: HttpRequest, study: Study | None) -> str:
    """Activate the study's language for the rest of this request (and its response); returns the code."""
    code = language_for(study, request)
    translation.activate(code)
    request.LANGUAGE_CODE = code
    return code


def remember_for_study(response: HttpResponse, study: Study) -> None:
    """On entry: pin a fixed study language in Django's language cookie, so that pages outside the study's
    views (a 404, the CSRF page) speak it too; a study that follows the browser clears an earlier pin."""
    if study.language in shipped():
        response.set_cookie(
            settings.LANGUAGE_COOKIE_NAME,
            study.language,
            max_age=settings.SESSION_COOKIE_AGE,
            secure=settings.SESSION_COOKIE_SECURE,
            samesite=settings.SESSION_COOKIE_SAMESITE,
        )
    else:
        response.delete_cookie(settings.LANGUAGE_COOKIE_NAME, samesite=settings.SESSION_COOKIE_SAMESITE)


def missing_task_texts(study: Study) -> list[str]:
    """The task texts a worker of a study in a fixed language would read in the default language instead
    (``de.labels.neutral.definition``, ...). Opening the study refuses these (services.studies.studies.change_status);
    the dashboard warns of them for a study opened before (reporting.monitoring). A study that follows the
    browser lacks none: a worker reads the texts the task has, in English where it has no others."""
    if study.language not in shipped():
        return []
    return missing_texts(study.task, study.language, list(study.task.labels.all()))
