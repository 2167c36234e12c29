"""The project's management commands skip Django's system checks (tasks_app/management/base.py); CI runs
those checks itself (scripts/check.sh system)."""

import subprocess
import sys

from django.core.management import get_commands, load_command_class

from tasks_app.management.base import ProjectCommand
from tests.conftest import REPO_ROOT as ROOT

OURS = ("annotation", "tasks_app")


def test_every_command_of_ours_is_a_project_command():
    ours = {name: app for name, app in get_commands().items() if app in OURS}
    assert {"import_clues", "configure_study", "rehearse_study", "human_performance"} <= set(ours)
    plain = [name for name, app in ours.items() if not isinstance(load_command_class(app, name), ProjectCommand)]
    assert plain == [], f"these commands would import every view before they start: {plain}"


def test_a_command_of_ours_starts_without_the_url_configuration(tmp_path):
    # What the checks would cost: importing the URL configuration (every view, REST framework, the schema).
    probe = (
        "import runpy, sys\n"
        "sys.argv = ['manage.py', 'plan_study', 'no-such-study']\n"
        "try:\n"
        "    runpy.run_path('manage.py', run_name='__main__')\n"
        "except BaseException:  # no such study, no tables: the checks would have run before\n"
        "    pass\n"
        "print('imported:', 'annotation.urls' in sys.modules, 'rest_framework.views' in sys.modules)\n"
    )
    env = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.stdout.splitlines()[-1:] == ["imported: False False"], done.stdout[-2000:] + done.stderr[-2000:]


def test_the_checks_stage_runs_djangos_system_checks():
    script = (ROOT / "scripts" / "check.sh").read_text()
    assert "ALL=(lint format mypy migrations system)" in script
    assert "manage.py check --fail-level WARNING" in script
