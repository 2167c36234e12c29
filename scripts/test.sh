#!/usr/bin/env bash
# One command: install what the tests need (venv, requirements, Debian's
# Chromium and a CJK font for the browser tests when missing) and run the whole suite.
# Extra arguments go to pytest. Exit 5 (no tests collected) counts as failure.
# The suite runs on every core (pytest-xdist: TEST_WORKERS processes, default one a core, each with its
# own database, media folder and ports); `-n0` among the arguments runs it in this one process.
set -euo pipefail
cd "$(dirname "$0")/.."
# Bytecode caches (__pycache__, git-ignored) even where the shell turns them off: the suite starts hundreds of
# Python processes (its workers, every manage.py the docs show, servers), and without the caches each one
# compiles the project again and pytest rewrites every test module again (collecting: 17 s, not 5 s).
unset PYTHONDONTWRITEBYTECODE
bash scripts/bootstrap.sh requirements-dev.txt
# The pages run in Chromium's headless shell (tests/browser.py says why); a test that switches tabs and
# the appendix's screenshots in the full browser. A CJK font too: without one the Chinese worker pages
# render as boxes, and their widths are not real.
if { [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromium-headless-shell ] || ! fc-list :lang=zh 2>/dev/null | grep -q .; } && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium chromium-headless-shell chromium-driver fonts-noto-cjk >/dev/null
fi
# pdflatex compiles every LaTeX export in an ACL-like two-column paper in a test: booktabs (the recommended
# set) and Times (psnfss's times with the fonts of texlive-fonts-recommended).
if ! kpsewhich ptmr7t.tfm >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
        texlive-latex-base texlive-latex-recommended texlive-fonts-recommended >/dev/null
fi
set +e
# --dist loadgroup: tests marked xdist_group(name) share a resource and run on one worker, one after another.
.venv/bin/python -m pytest -n "${TEST_WORKERS:-auto}" --dist loadgroup "$@"
rc=$?
set -e
if [ "$rc" = 5 ]; then
    echo "no tests were collected: failing" >&2
    exit 1
fi
exit "$rc"
