#!/usr/bin/env bash
# One command: install, migrate, load the bundled demo data, create an admin
# account and serve the app on http://127.0.0.1:8000 (SQLite, eager Celery).
#
# The demo lives in its own database file, demo.sqlite3 (DEMO_DB overrides
# it), never in db.sqlite3, which manage.py uses by default: importing the
# real release afterwards (README, "A study from start to finish") starts
# clean, and the demo's studies never pool into the real tables.
# --setup-only prepares everything and exits instead of serving.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export DEBUG="${DEBUG:-1}"
DEMO_DB="${DEMO_DB:-$PWD/demo.sqlite3}"
export DATABASE_URL="${DATABASE_URL:-sqlite:///$DEMO_DB}"
PY=.venv/bin/python
$PY manage.py migrate --noinput -v0
$PY manage.py load_demo
ADMIN_USER="${ADMIN_USER:-admin}"
ADMIN_PASSWORD="${ADMIN_PASSWORD:-admin}"
$PY manage.py ensure_admin --demo --username "$ADMIN_USER" --password "$ADMIN_PASSWORD"  # the local demo only
echo
echo "  Database: $DATABASE_URL (the demo's own)"
echo "  Admin:   http://127.0.0.1:8000/admin/   (user: $ADMIN_USER, password: $ADMIN_PASSWORD)"
echo "  Try a worker: http://127.0.0.1:8000/join/demo-sst2/?worker_id=alice"
echo
if [ "${1:-}" = "--setup-only" ]; then
    exit 0
fi
exec $PY manage.py runserver 127.0.0.1:8000
