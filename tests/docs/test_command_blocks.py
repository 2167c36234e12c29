"""Every command block of docs/*.md is run as written, checked, or listed here with the reason it cannot be.

Blocks are named by page and first line (``tests/docs/blocks.py``). Each page's runnable commands run in
order in one shell, in a fresh checkout's layout (``checkout``) on a copy of one prepared database: the
walk-through's first steps on the bundled demo release (the data location the README's ``../shared/clues``
stands for). ``manage.py X`` is run as ``.venv/bin/python manage.py X``. A line with ``[...]`` is a synopsis:
its command and every option it names are checked against the command's --help. A JSON block is parsed.
The README's blocks are run by tests/test_walkthrough.py. A new block fails here until it is accounted for.
"""

import json
import re
import shutil

import pytest

from tests.docs.blocks import all_blocks, as_manage, checkout, environment, help_text, run_script

TEST_COMMAND = "the test command itself (CI runs it)"
BENCHMARK = "a benchmark: minutes of load on the shared machine (tests/bench runs its smoke version)"
SERVER = "starts a server that is left running"
DEPLOY = "deployment on a real host (the multi-node tests, MULTINODE=1, run the stack on one machine)"
PROLIFIC = "needs Prolific's real API (PROLIFIC_API_TOKEN, a workspace)"
NOT_A_COMMAND = "not a command: an example of a request, a file or an output"

# Blocks no test can run, with the reason (the README's are tests/test_walkthrough.py's).
EXEMPT = {
    "docs/deployment.md: GUNICORN_BIND=127.0.0.1:8000 .venv/bin/gunicorn -c deploy/gunicorn.conf.py "
    "annotation.wsgi:application": SERVER,
    "docs/deployment.md: ./scripts/deploy_local.sh --nodes 2 [--pgbouncer] [--celery-workers 1]": SERVER,
    "docs/deployment.md: PGBOUNCER=$(bash scripts/build_pgbouncer.sh) MULTINODE=1 bash scripts/test.sh -m multinode": (
        TEST_COMMAND
    ),
    "docs/deployment.md: DATABASE_URL=postgres://USER:PASSWORD@PGBOUNCER_HOST:6432/annotation": (
        "environment settings for a PgBouncer host: " + DEPLOY
    ),
    "docs/deployment.md: mkdir certs": DEPLOY,
    "docs/development.md: bash scripts/bootstrap.sh requirements-dev.txt": "installs into .venv, the one this runs in",
    "docs/development.md: bash scripts/check.sh": "CI's first stage runs exactly these (.ci/run)",
    "docs/development.md: annotation/services/": NOT_A_COMMAND,
    "docs/development.md: .venv/bin/pre-commit install": "installs git hooks into the clone",
    "docs/development.md: bash scripts/test.sh": TEST_COMMAND,
    "docs/development.md: bash scripts/test.sh --durations=20": TEST_COMMAND,
    "docs/development.md: bash scripts/mutation.sh pay slots": (
        "mutation testing, minutes an area (tests/test_release_checks.py checks its area map and wiring)"
    ),
    "docs/development.md: bash scripts/release_checks.sh": (
        "the release's long runs, hours (tests/test_release_checks.py runs its set-up and wiring)"
    ),
    "docs/development.md: SCHEMATHESIS=1 .venv/bin/python -m pytest -q -p no:cacheprovider -m schemathesis -s": (
        TEST_COMMAND
    ),
    "docs/development.md: .venv/bin/python -m pytest -q -p no:cacheprovider tests/lifecycle": TEST_COMMAND,
    "docs/importing.md: Compared with the CLUES paper (Table 3; MNLI 7 genres x 30):": NOT_A_COMMAND,
    "docs/importing.md: cd FewCLUE": "needs a clone of FewCLUE's repository (a peer's install)",
    "docs/importing.md: .venv/bin/python bench/import_release.py ../shared/clues": BENCHMARK,
    "docs/performance.md: .venv/bin/python bench/request_cpu.py --code before=../before --code after=. --rounds 3": (
        BENCHMARK
    ),
    "docs/performance.md: .venv/bin/python bench/replay.py --concurrency 16": BENCHMARK,
    "docs/performance.md: .venv/bin/python bench/dashboard.py --code before=../before --code after=. --rounds 2 "
    "--requests 3": BENCHMARK,
    "docs/performance.md: .venv/bin/python bench/openloop.py": BENCHMARK,
    "docs/performance.md: .venv/bin/python bench/launch_burst.py --db sqlite": BENCHMARK,
    "docs/performance.md: DB_CONN_MAX_AGE=600 .venv/bin/gunicorn annotation.wsgi:application "
    "--bind 127.0.0.1:8000 \\": SERVER,
    "docs/performance.md: .venv/bin/python bench/peers.py": "needs the peer's install (doccano): " + BENCHMARK,
    'docs/performance.md: DEBUG=1 /usr/bin/time -f "%e s wall, %U+%S s CPU" .venv/bin/python manage.py '
    "rehearse_study clues-sst2-split1 --format json -o rehearsal.json": (
        "a real CLUES study's rehearsal, a minute of load (tests/rehearsal and the walk-through run rehearse_study)"
    ),
    "docs/prolific.md: .venv/bin/python manage.py prolific subscribe --url https://study.example.org/hooks/prolific/": (
        PROLIFIC
    ),
    "docs/prolific.md: .venv/bin/python manage.py prolific poll --study clues-sst2-split1": PROLIFIC,
    "docs/prolific.md: .venv/bin/python manage.py prolific message --study clues-sst2-split1 --kind bulk "
    "--template thanks": "runs as written against the Prolific stand-in (tests/prolific/test_messages.py)",
    "docs/prolific.md: the design's slots (conditions × workers per condition) "
    "+ the exclusions that kept their place": NOT_A_COMMAND,
    "docs/reports.md: DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotation CELERY_INTEGRATION=1 \\": TEST_COMMAND,
    "docs/reports.md: DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_table "
    ".venv/bin/python bench/table_scale.py": BENCHMARK,
    "docs/session-api.md: POST /api/session/submit/": NOT_A_COMMAND,
    'docs/session-api.md: "signals": {"visible_ms": 8400, "hidden_count": 1, "hidden_ms": 2100, "copy_count": 0}': (
        NOT_A_COMMAND
    ),
    "docs/studies.md: bash scripts/messages.sh fr": "adds a language's catalogs to the checkout (tests/i18n checks)",
}
# Lines of a run block that cannot run, with the reason.
NOT_RUN = {
    "manage.py plan_study clues-sst2-split1": "needs a pilot's completed workers (the lines after it plan without)",
    "GET /api/reports/table/": "an HTTP request (tests/reporting/test_benchmark_tables.py makes it)",
}
RUN_PAGES = ["docs/importing.md", "docs/reports.md", "docs/studies.md", "docs/team.md"]
# The data location, substituted: FewCLUE's release by the small copy in the repository.
SUBSTITUTIONS = [
    ("../FewCLUE/datasets", "tests/fixtures/fewclue"),
    ("../shared/fewclue/datasets", "tests/fixtures/fewclue"),
]


def docs_blocks():
    return [b for b in all_blocks() if b.page != "README.md"]


def _is_json(block) -> bool:
    return block.language == "json" or (block.language == "" and block.text.lstrip()[:1] in "{[")


def _synopsis(command: str) -> bool:
    return "[" in command or re.search(r"\b(PATH|DIR|FILE_OR_DIR)\b", command) is not None


def test_every_block_is_run_checked_or_exempt():
    unaccounted = []
    for block in docs_blocks():
        if block.name in EXEMPT or _is_json(block):
            continue
        if block.page in RUN_PAGES and "manage.py" in block.text:
            continue
        unaccounted.append(block.name)
    assert unaccounted == []
    stale = set(EXEMPT) - {b.name for b in docs_blocks()}
    assert stale == set(), "exempt blocks no page has any more"


@pytest.mark.parametrize("block", [b for b in docs_blocks() if _is_json(b)], ids=lambda b: f"{b.page}:{b.line}")
def test_a_json_example_parses(block):
    json.loads(block.text)


def _synopsis_lines():
    for block in docs_blocks():
        for command in block.commands():
            if "manage.py" in command and _synopsis(command) and block.name not in EXEMPT:
                yield pytest.param(command, id=f"{block.page}:{block.line}:{command[:40]}")


@pytest.mark.parametrize("command", list(_synopsis_lines()))
def test_a_synopsis_names_only_options_the_command_has(command):
    shown = help_text(command)
    options = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", command.split("manage.py", 1)[1]))
    assert sorted(o for o in options if o not in shown) == []


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The walk-through's first steps on the bundled release, and FewCLUE's studies from the small fixture."""
    where = checkout(tmp_path_factory.mktemp("docs") / "checkout")
    env = environment(DEBUG="1", DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}")
    run_script(
        "\n".join(
            [
                ".venv/bin/python manage.py migrate -v0",
                ".venv/bin/python manage.py import_clues tasks_app/demo_data --build-nested",
                ".venv/bin/python manage.py create_clues_studies --split 1",
                ".venv/bin/python manage.py import_fewclue tests/fixtures/fewclue",
                ".venv/bin/python manage.py create_fewclue_studies --training-items 2 --test-sample 3 --seed 1",
            ]
        ),
        cwd=where,
        env=env,
    )
    return where / "db.sqlite3"


def page_script(page: str) -> str:
    lines = []
    for block in docs_blocks():
        if block.page != page or block.name in EXEMPT or _is_json(block):
            continue
        for command in block.commands():
            if _synopsis(command) or any(marker in command for marker in NOT_RUN):
                continue
            for written, used in SUBSTITUTIONS:
                command = command.replace(written, used)
            lines.append(as_manage(command))
    return "\n".join(lines)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_pages_commands_run_as_written(page, prepared, tmp_path):
    where = checkout(tmp_path / "checkout")
    shutil.copy(prepared, where / "db.sqlite3")
    env = environment(DEBUG="1", DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}")
    script = page_script(page)
    if not script:
        pytest.skip(f"{page}: every command is a synopsis (checked against --help)")
    run_script(script, cwd=where, env=env)
