"""Every command block of docs/*.md is run as written, checked, or listed here with the reason it cannot be.

Blocks are named by page and first line (``tests/docs/blocks.py``). Each page's runnable commands run in order
in one shell, in a fresh checkout's layout (``checkout``) on a copy of one prepared database: the
walk-through's first steps on the bundled demo release (the data location the README's ``../shared/clues``
stands for), and a pilot's completed workers for ``plan_study SLUG``, written by the test
(tests/docs/pilot.py). ``manage.py X`` is run as ``.venv/bin/python manage.py X``. A line with ``[...]`` is a
synopsis: its command and every option it names are checked against the command's --help. A JSON block is
parsed. Blocks that write where they run (git hooks, a new language's catalogs) run as written in a scratch
git repository or a copy of the checkout; the blocks CI's own stages run are checked to be lines of .ci/run;
the long runs (issue 43) are checked to be run by the release script, scripts/release_checks.sh. Exempt is
only what cannot run inside a test: the test command itself, a server left running, Prolific's real API, a
peer's install, and what is not a command. The README's blocks are run by tests/test_walkthrough.py. A new
block fails here until it is accounted for.
"""

import json
import os
import re
import shutil
import subprocess

import pytest

from tests.docs.blocks import REPO, all_blocks, as_manage, checkout, environment, help_text, run_script
from tests.i18n import pofile

TEST_COMMAND = "the test command itself (CI runs it)"
SERVER = "starts a server that is left running"
PROLIFIC = "needs Prolific's real API (PROLIFIC_API_TOKEN, a workspace)"
PEER = "needs a peer's install"
NOT_A_COMMAND = "not a command: an example of a request, a file, settings or an output"
LONG_RUN = "a long run for a release or a measurement on a quiet machine, not CI's (issue 43)"

# Blocks no test can run, with the reason (the README's are tests/test_walkthrough.py's).
EXEMPT = {
    "docs/deployment.md: GUNICORN_BIND=127.0.0.1:8000 .venv/bin/gunicorn -c deploy/gunicorn.conf.py "
    "annotation.wsgi:application": SERVER,
    "docs/deployment.md: ./scripts/deploy_local.sh --nodes 2 [--pgbouncer] [--celery-workers 1]": (
        SERVER + ": two nodes, nginx, Celery (tests/deploy runs the same stack, MULTINODE=1)"
    ),
    "docs/deployment.md: PGBOUNCER=$(bash scripts/build_pgbouncer.sh) MULTINODE=1 bash scripts/test.sh -m multinode": (
        TEST_COMMAND
    ),
    "docs/deployment.md: DATABASE_URL=postgres://USER:PASSWORD@PGBOUNCER_HOST:6432/annotation": (
        NOT_A_COMMAND + ": a PgBouncer host's settings, USER, PASSWORD and PGBOUNCER_HOST to fill in"
    ),
    "docs/deployment.md: mkdir certs": (
        SERVER + ": the containers (docker compose up -d), which this project's machines cannot run "
        "(tests/test_compose.py checks the files)"
    ),
    "docs/development.md: annotation/services/": NOT_A_COMMAND,
    "docs/development.md: bash scripts/test.sh": TEST_COMMAND,
    "docs/development.md: bash scripts/test.sh --durations=20": TEST_COMMAND,
    "docs/development.md: SCHEMATHESIS=1 .venv/bin/python -m pytest -q -p no:cacheprovider -m schemathesis -s": (
        TEST_COMMAND
    ),
    "docs/development.md: .venv/bin/python -m pytest -q -p no:cacheprovider tests/lifecycle": TEST_COMMAND,
    "docs/importing.md: Compared with the CLUES paper (Table 3; MNLI 7 genres x 30):": NOT_A_COMMAND,
    "docs/importing.md: cd FewCLUE": PEER + ": a clone of FewCLUE's repository",
    "docs/performance.md: DB_CONN_MAX_AGE=600 .venv/bin/gunicorn annotation.wsgi:application "
    "--bind 127.0.0.1:8000 \\": SERVER,
    "docs/performance.md: .venv/bin/python bench/peers.py": PEER + ": doccano, which it installs beside ours",
    "docs/performance.md: /usr/bin/time bash scripts/test.sh -p no:cacheprovider --durations=40 -q": TEST_COMMAND,
    "docs/prolific.md: .venv/bin/python manage.py prolific subscribe --url https://study.example.org/hooks/prolific/": (
        PROLIFIC
    ),
    "docs/prolific.md: .venv/bin/python manage.py prolific poll --study clues-sst2-split1": PROLIFIC,
    "docs/prolific.md: .venv/bin/python manage.py prolific message --study clues-sst2-split1 --kind bulk "
    "--template thanks": PROLIFIC + ": run as written against the Prolific stand-in (tests/prolific/test_messages.py)",
    "docs/prolific.md: the design's slots (conditions × workers per condition) "
    "+ the exclusions that kept their place": NOT_A_COMMAND,
    "docs/reports.md: DATABASE_URL=postgres://postgres@127.0.0.1:5432/annotation CELERY_INTEGRATION=1 \\": TEST_COMMAND,
    "docs/session-api.md: POST /api/session/submit/": NOT_A_COMMAND,
    'docs/session-api.md: "signals": {"visible_ms": 8400, "hidden_count": 1, "hidden_ms": 2100, "copy_count": 0}': (
        NOT_A_COMMAND
    ),
}
# The long runs, each with the file that runs the same script and what it runs there: the release script
# (docs/development.md#release-checks), or a benchmark's smoke test, which its `benchmarks` check runs.
# test_a_long_run_is_run_by_the_release_script checks each file holds what is said.
LONG_RUNS = {
    "docs/development.md: bash scripts/release_checks.sh": (
        "tests/test_release_checks.py",
        '"scripts/release_checks.sh"',
    ),
    "docs/development.md: bash scripts/mutation.sh pay slots": (
        "scripts/release_checks.sh",
        "bash scripts/mutation.sh",
    ),
    'docs/performance.md: DEBUG=1 /usr/bin/time -f "%e s wall, %U+%S s CPU" .venv/bin/python manage.py '
    "rehearse_study clues-sst2-split1 --format json -o rehearsal.json": (
        "scripts/release_checks.sh",
        'rehearse_study "$slug"',
    ),
    "docs/importing.md: .venv/bin/python bench/import_release.py ../shared/clues": (
        "tests/bench/test_import_release_smoke.py",
        "bench/import_release.py",
    ),
    "docs/performance.md: .venv/bin/python bench/request_cpu.py --code before=../before --code after=. --rounds 3": (
        "tests/bench/test_request_cpu_smoke.py",
        "bench/request_cpu.py",
    ),
    "docs/performance.md: .venv/bin/python bench/replay.py --concurrency 16": (
        "tests/bench/test_replay_smoke.py",
        "bench/replay.py",
    ),
    "docs/performance.md: .venv/bin/python bench/dashboard.py --code before=../before --code after=. --rounds 2 "
    "--requests 3": ("tests/bench/test_dashboard_smoke.py", "bench/dashboard.py"),
    "docs/performance.md: .venv/bin/python bench/openloop.py": (
        "tests/bench/test_openloop_smoke.py",
        "bench/openloop.py",
    ),
    "docs/performance.md: .venv/bin/python bench/launch_burst.py --db sqlite": (
        "tests/bench/test_launch_burst_smoke.py",
        "bench/launch_burst.py",
    ),
    "docs/reports.md: DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_table "
    ".venv/bin/python bench/table_scale.py": ("tests/bench/test_table_scale_smoke.py", "bench/table_scale.py"),
}
EXEMPT.update({name: f"{LONG_RUN}: {where} runs {what}" for name, (where, what) in LONG_RUNS.items()})
# Blocks CI runs as written on every run: each of their commands is a line of .ci/run (checked below).
RUN_BY_CI = [
    "docs/development.md: bash scripts/bootstrap.sh requirements-dev.txt",
    "docs/development.md: bash scripts/check.sh",
]
# Blocks that run as written below, each in a scratch place of its own: a fresh git repository, a copy of the
# checkout (they write into the checkout they run in).
PRE_COMMIT = "docs/development.md: .venv/bin/pre-commit install"
NEW_LANGUAGE = "docs/studies.md: bash scripts/messages.sh fr"
RUN_HERE = [PRE_COMMIT, NEW_LANGUAGE]
# Lines of a run block that cannot run, with the reason.
NOT_RUN = {
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
    accounted = {*EXEMPT, *RUN_BY_CI, *RUN_HERE}
    assert not set(EXEMPT) & {*RUN_BY_CI, *RUN_HERE}, "a block is run or exempt, not both"
    unaccounted = []
    for block in docs_blocks():
        if block.name in accounted or _is_json(block):
            continue
        if block.page in RUN_PAGES and "manage.py" in block.text:
            continue
        unaccounted.append(block.name)
    assert unaccounted == []
    stale = accounted - {b.name for b in docs_blocks()}
    assert stale == set(), "blocks listed here that no page has any more"


def _block(name: str):
    [block] = [b for b in docs_blocks() if b.name == name]
    return block


@pytest.mark.parametrize("name", RUN_BY_CI)
def test_ci_runs_the_block_as_written(name):
    # CI's stages run these lines on every run; running them again here would install into the .venv this
    # runs in and repeat ruff and mypy.
    ci = {line.strip() for line in (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()}
    assert [c for c in _block(name).commands() if c not in ci] == []


@pytest.mark.parametrize("name", LONG_RUNS)
def test_a_long_run_is_run_by_the_release_script(name):
    where, what = LONG_RUNS[name]
    assert what in (REPO / where).read_text(encoding="utf-8"), f"{where} does not run {what}"
    if where.startswith("tests/bench/"):  # the smoke test runs in the release script's benchmarks check
        assert "tests/bench/*_smoke.py" in (REPO / "scripts" / "release_checks.sh").read_text(encoding="utf-8")
        assert where.endswith("_smoke.py") and 'os.environ.get("BENCH_SMOKE")' in (REPO / where).read_text()


def test_the_pre_commit_block_runs_as_written_in_a_repository_of_its_own(tmp_path):
    """The hooks installed in a fresh git repository holding the project's hook configuration, with this
    .venv as its .venv: the block's commands as written. That repository has no Python file, so `run` names
    each hook and skips it; what a hook runs is scripts/check.sh, which CI's first stage runs as written."""
    assert re.search(r"^pre-commit==", (REPO / "requirements-dev.txt").read_text(), re.MULTILINE)
    clone = tmp_path / "clone"
    clone.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=clone, check=True)
    shutil.copy(REPO / ".pre-commit-config.yaml", clone)
    subprocess.run(["git", "add", ".pre-commit-config.yaml"], cwd=clone, check=True)
    (clone / ".venv").symlink_to(REPO / ".venv")
    env = environment(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-cache"))  # not the user's cache
    out = run_script("\n".join(_block(PRE_COMMIT).commands()), cwd=clone, env=env, timeout=120)
    hook = clone / ".git" / "hooks" / "pre-commit"
    assert hook.is_file() and os.access(hook, os.X_OK) and "pre-commit" in hook.read_text()
    names = re.findall(r"^\s+name: (.+)$", (REPO / ".pre-commit-config.yaml").read_text(), re.MULTILINE)
    assert names == ["ruff check", "ruff format --check", "mypy", "makemigrations --check", "manage.py check"]
    assert [n for n in names if not re.search(rf"^{re.escape(n)}\.+", out, re.MULTILINE)] == [], out


def _msgids(po) -> set[str]:
    return {e.msgid for e in pofile.read(po) if not e.is_header and not e.obsolete}


@pytest.mark.timeout(300)
def test_adding_a_language_runs_as_written_in_a_copy_of_the_checkout(tmp_path):
    """The block writes French catalogs into the checkout it runs in: here a copy of this checkout's files."""
    copy = tmp_path / "checkout"
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file() and not name.startswith("locale/fr/"):  # a working tree that already tried it
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy / name)
    (copy / ".venv").symlink_to(REPO / ".venv")
    run_script("\n".join(_block(NEW_LANGUAGE).commands()), cwd=copy, env=environment(), timeout=240)
    french = copy / "locale" / "fr" / "LC_MESSAGES"
    assert sorted(p.name for p in french.iterdir()) == ["django.mo", "django.po", "djangojs.mo", "djangojs.po"]
    for domain in ("django", "djangojs"):
        ids, german = _msgids(french / f"{domain}.po"), _msgids(REPO / "locale" / "de" / "LC_MESSAGES" / f"{domain}.po")
        # the same marked strings as the German catalog, which scripts/messages.sh keeps current
        assert ids and ids - german == set(), domain
    assert "Take part" in _msgids(french / "django.po")  # the start page's button (templates/entry/start.html)
    assert not (REPO / "locale" / "fr").exists()


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


@pytest.fixture(scope="session")  # built once: the page tests share one worker (their xdist group)
def prepared(tmp_path_factory):
    """The walk-through's first steps on the bundled release, FewCLUE's studies from the small fixture, and a
    pilot of clues-sst2-split1 (one completed worker a condition, written by tests/docs/pilot.py)."""
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
                # A pilot for `plan_study SLUG` to plan from: one completed worker a condition (tests/docs/pilot.py).
                ".venv/bin/python manage.py shell -c "
                "'from tests.docs.pilot import complete_pilot; complete_pilot(\"clues-sst2-split1\")'",
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
@pytest.mark.xdist_group("docs-prepared")
@pytest.mark.parametrize("page", RUN_PAGES)
def test_the_pages_commands_run_as_written(page, prepared, tmp_path):
    where = checkout(tmp_path / "checkout")
    shutil.copy(prepared, where / "db.sqlite3")
    env = environment(DEBUG="1", DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}")
    script = page_script(page)
    if not script:
        pytest.skip(f"{page}: every command is a synopsis (checked against --help)")
    run_script(script, cwd=where, env=env)
