#!/usr/bin/env bash
# The static checks: the one list that CI (.ci/run, first stage) and the pre-commit hooks
# (.pre-commit-config.yaml) both run. Needs .venv with requirements-dev.txt
# (bash scripts/bootstrap.sh requirements-dev.txt).
#
#   bash scripts/check.sh                 every check, in this order
#   bash scripts/check.sh lint mypy       some of them: lint, format, mypy, migrations, system
#
# Every named check runs even when an earlier one fails; the exit status is 1 if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

ALL=(lint format mypy migrations system)

run() {
    case "$1" in
        lint) .venv/bin/ruff check . ;;
        format) .venv/bin/ruff format --check . ;;
        # The packages are listed in pyproject.toml ([tool.mypy] files).
        mypy) .venv/bin/mypy ;;
        # Models and migrations agree. DEBUG=1: no production secrets needed; an in-memory
        # database, so the check neither needs nor touches a real one.
        migrations) DEBUG=1 DATABASE_URL="sqlite://:memory:" .venv/bin/python manage.py makemigrations --check --dry-run ;;
        # Django's system checks (models, URLs, admin, templates), warnings included: the project's own
        # commands skip them (tasks_app/management/base.py), so they run here.
        system) DEBUG=1 DATABASE_URL="sqlite://:memory:" .venv/bin/python manage.py check --fail-level WARNING ;;
        *)
            echo "unknown check: $1 (known: ${ALL[*]})" >&2
            return 2
            ;;
    esac
}

failed=()
for check in "${@:-${ALL[@]}}"; do
    echo "-- $check"
    run "$check" || failed+=("$check")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
