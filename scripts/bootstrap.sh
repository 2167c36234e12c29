#!/usr/bin/env bash
# Create .venv (Python 3.11+) and install a pinned requirements file (default: requirements.txt,
# the app's; scripts/test.sh passes requirements-dev.txt). Idempotent: reinstalls only when the
# file, or a file it includes, changed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
REQUIREMENTS="${1:-requirements.txt}"
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=".venv/.${REQUIREMENTS%.txt}.sha256"
want=$(cat "$REQUIREMENTS" requirements.txt | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    .venv/bin/python -m pip install --quiet --upgrade pip
    .venv/bin/python -m pip install --quiet -r "$REQUIREMENTS"
    echo "$want" > "$stamp"
fi
