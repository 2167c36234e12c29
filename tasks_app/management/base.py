"""The base of the project's management commands (annotation's and tasks_app's)."""

from django.core.management.base import BaseCommand


class ProjectCommand(BaseCommand):
    """A ``manage.py`` command that does not run Django's system checks first.

    The checks import the whole URL configuration (every view, REST framework, the OpenAPI schema): about
    a second of each command's 1.6 s, paid again on every call of a study's workflow and of the scripts
    that chain them, and none of it concerns what these commands read or write. The checks run where
    they belong: ``manage.py check`` in CI (scripts/check.sh), ``migrate`` and ``runserver`` before they
    start, and ``manage.py check --deploy`` in docs/deployment.md.
    """

    requires_system_checks: list[str] = []
