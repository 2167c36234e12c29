#!/usr/bin/env bash
# One command: install, migrate, load the bundled demo data, create an admin
# account and serve the app on http://127.0.0.1:8000 (SQLite, eager Celery).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
export DEBUG="${DEBUG:-1}"
PY=.venv/bin/python
$PY manage.py migrate --noinput -v0
$PY manage.py load_demo
ADMIN_USER="${ADMIN_USER:-admin}"
ADMIN_PASSWORD="${ADMIN_PASSWORD:-admin}"
$PY manage.py ensure_admin --username "$ADMIN_USER" --password "$ADMIN_PASSWORD"
echo
echo "  Admin:   http://127.0.0.1:8000/admin/   (user: $ADMIN_USER, password: $ADMIN_PASSWORD)"
echo "  Try a worker: http://127.0.0.1:8000/join/demo-sst2/?worker_id=alice"
echo
exec $PY manage.py runserver 127.0.0.1:8000
