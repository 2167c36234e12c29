#!/usr/bin/env bash
# A multi-node deployment on this machine (docs/deployment.md): N gunicorn nodes behind nginx (TLS, a
# throw-away certificate), optionally through PgBouncer, one Celery beat and workers, on PostgreSQL and
# Redis (started when down). Installs nginx and PgBouncer from Debian when missing. Runs until Ctrl-C,
# then stops everything it started and drops its database. Arguments go to tests/deploy/localstack.py:
#   ./scripts/deploy_local.sh --nodes 3 --pgbouncer --celery-workers 2
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
bash scripts/install_deploy_tools.sh
bash scripts/services.sh postgres redis
exec .venv/bin/python -m tests.deploy.localstack "$@"
