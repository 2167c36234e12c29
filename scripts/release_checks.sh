#!/usr/bin/env bash
# Release checks: the long runs that CI (.ci/run) leaves out, run before a release (docs/development.md#release-checks).
#
#   bash scripts/release_checks.sh                 # all of them
#   bash scripts/release_checks.sh rehearsals      # some: rehearsals, lifecycle, mutation, benchmarks
#
# rehearsals: every CLUES study of split 1 rehearsed (rehearse_study), on a scratch database of its own, set up
#   as the README's walk-through sets a real study up (import, create, configure, attention checks). Reads the
#   release from CLUES_DIR (default ../shared/clues). RELEASE_DATABASE_URL chooses the database (default: a fresh
#   SQLite file; a PostgreSQL database there is used as it is, so name one that may be overwritten),
#   RELEASE_STUDIES the tasks (default all six: "sst2 mnli conll03 wikiann squad2 record"),
#   RELEASE_WORKERS_PER_CONDITION the crowd (default: each study's own, three a condition),
#   RELEASE_ATTENTION_EVERY the attention checks' spacing (default 40, as the README; a small test set needs less).
# lifecycle: the lifecycle model's long profile (tests/lifecycle, LIFECYCLE_PROFILE=long: 1,000 examples of 60
#   steps; LIFECYCLE_EXAMPLES and LIFECYCLE_STEPS override them), on DATABASE_URL's database (SQLite by default).
# mutation: mutation testing (scripts/mutation.sh, mutmut): every area, or MUTATION_AREAS (e.g. "pay majority");
#   fails when a mutant survives that docs/development.md#mutation-testing does not argue equivalent.
# benchmarks: every benchmark the docs show, end to end with tiny counts (tests/bench/*_smoke.py, BENCH_SMOKE=1),
#   so that a script nobody ran for a while still runs; the figures themselves are measured on a quiet machine
#   (docs/performance.md). The stack's need PostgreSQL at 127.0.0.1:5432 and Redis (scripts/services.sh).
#
# Each check prints its wall time; the reports land in RELEASE_CHECKS_DIR (default test-artifacts/release-checks).
# Any failure fails the run, after the others have run.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 DEBUG=1
CLUES_DIR="${CLUES_DIR:-../shared/clues}"
OUT="${RELEASE_CHECKS_DIR:-test-artifacts/release-checks}"
STUDIES="${RELEASE_STUDIES-sst2 mnli conll03 wikiann squad2 record}"
export ATTENTION_EVERY="${RELEASE_ATTENTION_EVERY:-40}"
mkdir -p "$OUT"
failed=()

timed() {  # timed NAME COMMAND...: runs it, prints its wall time, remembers a failure
    local name=$1 start=$SECONDS
    shift
    if "$@"; then
        echo "-- $name: ok in $((SECONDS - start)) s"
    else
        echo "-- $name: FAILED after $((SECONDS - start)) s"
        failed+=("$name")
        return 1
    fi
}

rehearsals() {
    local scratch manage slug
    scratch=$(mktemp -d)
    export DATABASE_URL="${RELEASE_DATABASE_URL:-sqlite:///$scratch/release.sqlite3}"
    manage=(.venv/bin/python manage.py)
    "${manage[@]}" migrate -v0 &&
        "${manage[@]}" import_clues "$CLUES_DIR" --build-nested &&
        "${manage[@]}" create_clues_studies --split 1 --filter-rule relative --filter-threshold 0.3 || {
        rm -rf "$scratch"
        return 1
    }
    local rc=0
    for task in $STUDIES; do
        slug="clues-$task-split1"
        local workers=()
        [ -n "${RELEASE_WORKERS_PER_CONDITION:-}" ] && workers=(--workers-per-condition "$RELEASE_WORKERS_PER_CONDITION")
        timed "configure $slug" bash -c '
            "$@" configure_study "$0" --consent-file docs/examples/consent.en.md \
                --survey-file docs/examples/survey.en.json --code completed=C0MPL3TE --code screened_out=SCR33N \
                --posted-reward 1.50 >/dev/null &&
            "$@" attention_checks "$0" --every "$ATTENTION_EVERY" >/dev/null' "$slug" "${manage[@]}" || rc=1
        timed "rehearse_study $slug" "${manage[@]}" rehearse_study "$slug" "${workers[@]}" \
            --format json -o "$OUT/rehearsal-$slug.json" || rc=1
    done
    rm -rf "$scratch"
    unset DATABASE_URL
    return "$rc"
}

lifecycle() {
    LIFECYCLE_PROFILE=long .venv/bin/python -m pytest -q -p no:cacheprovider -n0 tests/lifecycle \
        --timeout "${LIFECYCLE_TIMEOUT:-7200}"
}

mutation() {
    local areas=()
    read -ra areas <<<"${MUTATION_AREAS:-}"
    MUTATION_DIR="$OUT/mutation" bash scripts/mutation.sh "${areas[@]}"
}

benchmarks() {
    BENCH_SMOKE=1 .venv/bin/python -m pytest -q -p no:cacheprovider -n0 tests/bench/*_smoke.py
}

checks=("$@")
[ "${#checks[@]}" -gt 0 ] || checks=(rehearsals lifecycle mutation benchmarks)
for check in "${checks[@]}"; do
    case "$check" in
    rehearsals | lifecycle | mutation | benchmarks) echo "== $check"; timed "$check" "$check" || true ;;
    *) echo "unknown check: $check (rehearsals, lifecycle, mutation, benchmarks)" >&2; exit 2 ;;
    esac
done
if [ "${#failed[@]}" -gt 0 ]; then
    printf 'failed: %s\n' "${failed[@]}" >&2
    exit 1
fi
echo "all release checks passed"
