"""The README's two paths in one checkout: the demo, then "A study from start to finish" as written.

Runs the real scripts and commands in subprocesses (each its own database file under tmp_path, where the
README's defaults would put demo.sqlite3 and db.sqlite3).
"""

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.docs.blocks import Block, blocks, checkout, environment, run_script

REPO = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "DJANGO_SETTINGS"))}
    return {**env, "DEBUG": "1", **extra}


def _manage(env, *args) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.clues
@pytest.mark.timeout(900)
def test_the_walkthrough_works_as_written_after_the_demo(tmp_path, clues_dir):
    demo = subprocess.run(
        ["bash", "scripts/run_demo.sh", "--setup-only"],
        cwd=REPO,
        env=_env(DEMO_DB=str(tmp_path / "demo.sqlite3"), ADMIN_PASSWORD="pw"),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert (tmp_path / "demo.sqlite3").exists() and "the demo's own" in demo.stdout

    # The walk-through, on the database manage.py uses (db.sqlite3 by default; here in tmp_path).
    env = _env(DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}")
    _manage(env, "migrate", "-v0")
    _manage(env, "import_clues", str(clues_dir), "--build-nested")
    created = _manage(env, "create_clues_studies", "--split", "1", "--open", "--posted-reward", "1.50")
    assert "clues-sst2-split1: created (open)" in created
    table = _manage(env, "human_performance", "--all", "--format", "markdown")
    assert "demo" not in table.lower()  # the demo's six studies are not pooled in

    # And the demo is still the demo, untouched.
    demo_env = _env(DATABASE_URL=f"sqlite:///{tmp_path / 'demo.sqlite3'}")
    demo_table = _manage(demo_env, "human_performance", "--all", "--format", "json")
    assert "demo-sst2" in demo_table and "clues-sst2" not in demo_table


# What the test substitutes in the README's commands, and why; nothing else is changed.
SUBSTITUTIONS = [
    ("../shared/clues", "tasks_app/demo_data"),  # the data location: the bundled demo release, the same format
    ("--every 40", "--every 4"),  # the demo's test sets have 8 items, the release's hundreds
    # ensure_admin prints a new strong password; the test gives one it knows, to log in as the researcher would.
    (
        "manage.py ensure_admin --username admin ",
        "manage.py ensure_admin --username admin --password 'a-long-password-1' ",
    ),
]
# Lines of the walk-through that cannot run inside a test, each with the reason.
NOT_RUN = {
    "manage.py runserver": "serves until stopped: the test starts it on a free port and opens its pages",
    "--run": "approves, pays or blocks on Prolific: needs Prolific's real API (the dry run above it runs)",
}
WALKTHROUGH_END = "## A FewCLUE study"


def readme_walkthrough() -> list[Block]:
    """The README's command blocks from "A study from start to finish" up to the FewCLUE study."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text[: text.index("## A study from start to finish")].count("\n") + 1
    end = text[: text.index(WALKTHROUGH_END)].count("\n") + 1
    return [b for b in blocks(REPO / "README.md") if start <= b.line <= end]


def as_run(block: Block) -> str:
    """The block as the test runs it: the substitutions made, the lines of NOT_RUN left out."""
    lines = []
    for command in block.commands():
        if any(marker in command for marker in NOT_RUN):
            continue
        for written, used in SUBSTITUTIONS:
            command = command.replace(written, used)
        lines.append(command)
    return "\n".join(lines)


# Session-scoped: its three tests share an xdist group, but other modules' tests run between them on that
# worker, and a module-scoped fixture would be built again after each (a minute each time).
@pytest.fixture(scope="session")
def walked(tmp_path_factory):
    """A checkout's layout where every README command up to the FewCLUE study ran as written, in order
    (db.sqlite3 beside manage.py, as the README's default puts it); the stdout of each block."""
    where = checkout(tmp_path_factory.mktemp("readme") / "checkout")
    # One shell, as the researcher's: the first block's export holds for the blocks after it.
    marker = "=== next block ==="
    script = f"\necho '{marker}'\n".join(as_run(block) for block in readme_walkthrough())
    env = environment(DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}")  # the README's default place, here
    outputs = run_script(script, cwd=where, env=env, timeout=900).split(marker + "\n")
    return where, outputs


def test_the_walkthrough_is_the_readmes_commands_in_order():
    first = [b.commands()[0] for b in readme_walkthrough()]
    assert first[0] == "export DEBUG=1" and len(first) == 3, first
    assert "study_appendix" in readme_walkthrough()[-1].text  # step 9, the publishing commands, is read


@pytest.mark.browser
@pytest.mark.timeout(1200)
@pytest.mark.xdist_group("walked")  # the module's walk-through is built once, on one worker (minutes)
def test_the_walkthrough_runs_as_written_to_the_end(walked):
    """Every command from migrate to the appendix, on a fresh checkout's layout with the bundled release."""
    where, (setup, prolific, publish) = walked
    env = environment(DEBUG="1", DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}")
    shown = run_script(".venv/bin/python manage.py configure_study clues-sst2-split1 --show", cwd=where, env=env)
    assert "What we record" in shown and "C0MPL3TE" in shown and "native" in shown
    assert "Dry run" in prolific
    assert "\\begin{table" in publish and '"heds_version"' in publish  # the LaTeX table, the HEDS form
    appendix = where / "appendix"
    assert (appendix / "texts.md").read_text(encoding="utf-8").startswith("# Appendix")
    if "screenshots skipped" not in publish:  # Chromium present: the README's "texts + screenshots"
        for page in ("consent", "start", "training", "reveal", "test"):
            assert (appendix / f"en-{page}.png").stat().st_size > 1000, page


def _fewclue_data() -> Path | None:
    value = os.environ.get("FEWCLUE_DIR") or str(REPO.parent / "shared" / "fewclue" / "datasets")
    return Path(value) if (Path(value) / "eprstmt").is_dir() else None


@pytest.mark.timeout(900)
@pytest.mark.xdist_group("walked")
def test_the_fewclue_commands_run_as_written_beside_the_clues_study(walked, tmp_path):
    """The README's FewCLUE block in the database where the CLUES walk-through ran (issue 40, item 3)."""
    data = _fewclue_data()
    if data is None:
        pytest.skip("FewCLUE's datasets/ not found (FEWCLUE_DIR; docs/importing.md says how to extract it)")
    where, _ = walked
    here = checkout(tmp_path / "checkout")
    (here / "db.sqlite3").write_bytes((where / "db.sqlite3").read_bytes())  # the walked database, a copy
    (block,) = [b for b in blocks(REPO / "README.md") if "import_fewclue" in b.text]
    script = "export DEBUG=1\n" + block.text.replace("../shared/fewclue/datasets", str(data))  # the data location
    out = run_script(script, cwd=here, env=environment(DATABASE_URL=f"sqlite:///{here / 'db.sqlite3'}"), timeout=900)
    assert "EPRSTMT" in out and "Human (FewCLUE paper)" in out and "SST-2" not in out


@pytest.mark.parametrize("language", ["en", "de"])
def test_the_example_consent_and_survey_files_are_valid(language, db):
    from annotation.protocol.survey import validate_definition

    survey = json.loads((REPO / "docs" / "examples" / f"survey.{language}.json").read_text(encoding="utf-8"))
    validate_definition(survey)
    consent = (REPO / "docs" / "examples" / f"consent.{language}.md").read_text(encoding="utf-8")
    assert consent.startswith("# ") and len(consent) > 500


# A function (the CSP forbids eval): what a researcher would see wrong on the page.
LOOK = """() => ({
  overflow: document.documentElement.scrollWidth - window.innerWidth,
  raw: (document.body.innerText.match(/\\{\\{|\\{%|%\\(\\w+\\)[sd]|\\bmsgid\\b/g) || []),
})"""
# The pages the README tells the researcher to open (step 4 to 7): path, and the widths to look at.
PAGES = [
    ("/admin/", (1366,)),
    ("/admin/annotation/study/", (1366,)),
    ("/dashboard/", (1366,)),
    ("/dashboard/study/clues-sst2-split1/", (1366,)),
    ("/work/preview/clues-sst2-split1/?shots=10", (1366, 390)),
    ("/join/clues-sst2-split1/?worker_id=alice", (1366, 390)),
    ("/api/docs/", (1366,)),
]


@pytest.mark.browser
@pytest.mark.timeout(600)
@pytest.mark.xdist_group("walked")
def test_the_pages_the_readme_names_open_without_an_error_or_overflow(walked, browser):
    """`runserver` as the README runs it (on a free port), then each page it names opened in Chromium, as the
    admin the walk-through made: no server error, no raw template or message placeholder, no page wider
    than the window."""
    from bench.ports import free_port

    where, _ = walked
    port = free_port()
    env = environment(DEBUG="1", DATABASE_URL=f"sqlite:///{where / 'db.sqlite3'}", PYTHONUNBUFFERED="1")
    # The README's ensure_admin prints a new password; the test sets one it knows for the same account.
    reset = [".venv/bin/python", "manage.py", "ensure_admin", "--username", "admin", "--password", "a-long-password-1"]
    subprocess.run(reset, cwd=where, env=env, check=True, capture_output=True)
    server = subprocess.Popen(
        [".venv/bin/python", "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=where,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        context = browser.new_context(viewport={"width": 1366, "height": 900})
        page = context.new_page()
        for line in server.stdout or ():  # ready once it says how to quit (no sleep: the read blocks)
            if "Quit the server" in line:
                break
        assert server.poll() is None, "runserver stopped"
        drain = threading.Thread(target=lambda: [None for _ in server.stdout or ()], daemon=True)
        drain.start()  # its request log, read so that the pipe never fills
        page.goto(f"{base}/admin/login/")
        page.fill("#id_username", "admin")
        page.fill("#id_password", "a-long-password-1")
        page.click("input[type=submit]")
        problems = {}
        for path, widths in PAGES:
            for width in widths:
                page.set_viewport_size({"width": width, "height": 900})
                response = page.goto(base + path)
                assert response is not None and "/login/" not in page.url, page.url  # opened as the admin
                seen = page.evaluate(LOOK)
                if response.status >= 500 or seen["overflow"] > 1 or seen["raw"]:
                    problems[f"{path} @{width}"] = {"status": response.status, **seen}
        context.close()
        assert problems == {}
    finally:
        server.terminate()
        server.wait(timeout=30)
