#!/usr/bin/env bash
# Mutation testing (mutmut, pinned in requirements-dev.txt) of the rules that decide money, slots and verdicts:
# each area's modules mutated, only that area's tests run against each mutant, on two cores (MUTATION_CORES).
#
#   bash scripts/mutation.sh              # every area (scripts/mutation.py --list names them)
#   bash scripts/mutation.sh pay majority # some
#
# Each area runs in a copy of the code (mutants/, git-ignored) and prints its mutants, how many were killed
# and every survivor's diff; the figures land in MUTATION_DIR (default test-artifacts/mutation). It fails when
# any mutant survives: docs/development.md#mutation-testing lists the ones argued equivalent, and their count
# per area, so a survivor beyond that list is news.
set -uo pipefail
cd "$(dirname "$0")/.."
export PYTHONUNBUFFERED=1 DEBUG=1
# The tests run inside mutants/, one folder deeper than usual: the shared data's place is given outright.
CLUES_DIR="$(realpath -m "${CLUES_DIR:-../shared/clues}")"
FEWCLUE_DIR="$(realpath -m "${FEWCLUE_DIR:-../shared/fewclue/datasets}")"
export CLUES_DIR FEWCLUE_DIR
unset DATABASE_URL  # in-memory SQLite: every forked mutant run has a database of its own
python=.venv/bin/python

areas=("$@")
if [ "${#areas[@]}" -eq 0 ]; then
    mapfile -t areas < <("$python" scripts/mutation.py --list | cut -f1)
fi
failed=()
for area in "${areas[@]}"; do
    start=$SECONDS
    nice -n "${MUTATION_NICE:-15}" "$python" scripts/mutation.py "$area" run
    rc=$?
    echo "-- mutation $area: exit $rc after $((SECONDS - start)) s"
    [ "$rc" -eq 0 ] || failed+=("$area")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "mutation: survivors or errors in: ${failed[*]}" >&2
    exit 1
fi
