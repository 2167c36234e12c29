#!/usr/bin/env bash
# The worker UI's translation catalogs (docs/studies.md, Languages): extract the marked strings into
# locale/<code>/LC_MESSAGES/django.po (templates, Python) and djangojs.po (the worker's JavaScript),
# then compile the .mo files that are committed beside them. Installs GNU gettext when missing.
#
#   bash scripts/messages.sh            update every shipped language's .po files, then compile them
#   bash scripts/messages.sh compile    only compile (after editing a .po file)
#   bash scripts/messages.sh de fr      update these languages (a new one is created), then compile
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v msgfmt >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq gettext >/dev/null
fi
export DEBUG=1 DATABASE_URL="sqlite://:memory:"  # no database or secrets needed
manage() { .venv/bin/python manage.py "$@"; }
# Staff-only and generated code stays out of the worker's catalogs.
IGNORE=(--ignore=.venv --ignore=tests --ignore=bench --ignore=staticfiles --ignore=media
        --ignore=test-artifacts --ignore=static/dashboard --ignore=templates/dashboard --ignore=templates/admin)
if [ "${1:-}" != compile ]; then
    if [ "$#" -gt 0 ]; then
        langs=("$@")
    else
        langs=()
        for dir in locale/*/; do langs+=("$(basename "$dir")"); done
    fi
    for lang in "${langs[@]}"; do
        manage makemessages --locale "$lang" --domain django --no-obsolete --add-location file "${IGNORE[@]}"
        manage makemessages --locale "$lang" --domain djangojs --no-obsolete --add-location file "${IGNORE[@]}"
    done
fi
manage compilemessages --ignore=.venv  # every language under locale/
