"""Every LaTeX table the app exports fits a two-column ACL paper: pdflatex compiles each one in an article
with the ACL template's page geometry (A4, 11pt Times, two columns, a 455 pt text width, 0.6 cm between the
columns; written here from those figures, no template copied) and the log has no ``Overfull \\hbox`` over
1 pt. The exports are of a factory-built CLUES study set (six tasks, four conditions, three workers each)
and a FewCLUE study set (nine tasks, the fixture), with the widest cells a table can have (a mean, a
standard deviation and an interval)."""

import re
import shutil
import subprocess
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Study
from annotation.reporting.bootstrap import IntervalOptions
from annotation.reporting.exports import export_to_bytes
from annotation.reporting.options import MetricOptions
from annotation.reporting.statement import build_statement, render_statement
from tasks_app.demo import import_demo_data
from tasks_app.importing.fewclue.tasks import TASKS as FEWCLUE_FOLDERS
from tasks_app.models import Task
from tests.conftest import FEWCLUE_FIXTURE
from tests.reporting.builders import add_annotator, items_of, make_study, training_examples

pytestmark = pytest.mark.django_db

# The ACL template's page, from its published figures: A4, 2.5 cm margins (a 16 cm = 455 pt text width),
# two columns 0.6 cm apart, 11pt Times.
ACL_PREAMBLE = [
    r"\documentclass[11pt,twocolumn]{article}",
    r"\usepackage[a4paper,margin=2.5cm,columnsep=0.6cm]{geometry}",
    r"\usepackage{times}",
    r"\usepackage{booktabs}",
]
OVERFULL = re.compile(r"Overfull \\hbox \((\d+(?:\.\d+)?)pt too wide\)")
FILLER = "The paragraph before the table, so that it floats in running text. " * 6


def _paper(body: str) -> str:
    return "\n".join([*ACL_PREAMBLE, r"\begin{document}", FILLER, "", body, "", FILLER, r"\end{document}", ""])


def _compile(tmp_path, name: str, body: str) -> str:
    pdflatex = shutil.which("pdflatex")
    if pdflatex is None:
        pytest.skip("pdflatex not installed (scripts/test.sh installs it from Debian's TeX Live)")
    (tmp_path / f"{name}.tex").write_text(_paper(body), encoding="utf-8")
    run = subprocess.run(
        [pdflatex, "-interaction=nonstopmode", "-halt-on-error", f"{name}.tex"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    log = (tmp_path / f"{name}.log").read_text(encoding="latin-1")
    assert run.returncode == 0, f"{name}: {run.stdout[-3000:]}"
    assert "Font shape" not in log or "undefined" not in log, f"{name}: a font is missing (texlive-fonts-recommended)"
    return log


def _answers(task: Task, worker: int) -> list:
    """Worker 0 right everywhere, the others wrong on a different item each (so the cells have a spread)."""
    answers = []
    for i, example in enumerate(items_of(task)):
        gold = example.gold_answers
        if i % 3 == worker and worker:
            labels = list(task.labels.values_list("name", flat=True))
            other = next((label for label in labels if [label] != gold), None)
            answers.append([other] if task.is_classification and other else [])
        else:
            answers.append(gold)
    return answers


@pytest.fixture
def clues_studies():
    import_demo_data()
    made = []
    for task in Task.objects.filter(slug__in=["sst2", "mnli", "conll03", "wikiann", "squad2", "record"]):
        study = make_study(task, slug=f"paper-{task.slug}")
        for shots in (0, 10, 20, 30):
            for worker in range(3):
                condition = study.conditions.get(shots=shots)
                golds = [e.gold_answers for e in training_examples(condition)] if shots else []
                training = [[] if (i + worker) % 4 == 0 else gold for i, gold in enumerate(golds)]
                add_annotator(study, shots, answers=_answers(task, worker), training_answers=training)
        made.append(study)
    assert len(made) == 6
    return made


@pytest.fixture
def fewclue_studies():
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), stdout=StringIO())
    call_command(
        "create_fewclue_studies", "--training-items", "10", "--test-sample", "2", "--seed", "7", stdout=StringIO()
    )
    made = list(Study.objects.filter(slug__startswith="fewclue-"))
    assert len(made) == len(FEWCLUE_FOLDERS) == 9
    return made


def _overfull(log: str) -> list[float]:
    return [float(points) for points in OVERFULL.findall(log)]


@pytest.mark.parametrize("kind", ["table-latex", "training-latex"])
def test_the_clues_tables_fit_the_acl_page(clues_studies, tmp_path, kind):
    options = MetricOptions()
    tex = export_to_bytes(kind=kind, studies=clues_studies, options=options, intervals=IntervalOptions()).decode()
    assert r"\hline" not in tex and r"\toprule" in tex
    log = _compile(tmp_path, kind, tex)
    assert not [p for p in _overfull(log) if p > 1], f"{kind} overflows: {_overfull(log)}\n{tex}"


def test_the_fewclue_table_fits_the_acl_page(fewclue_studies, tmp_path):
    tex = export_to_bytes(kind="fewclue-latex", studies=fewclue_studies, options=MetricOptions()).decode()
    assert r"\hline" not in tex and r"\toprule" in tex and "|" not in tex.split(r"\begin{tabular}")[1][:40]
    for folder in FEWCLUE_FOLDERS:
        assert folder.folder.upper() in tex  # every task still in the table, split or not
    log = _compile(tmp_path, "fewclue", tex)
    assert not [p for p in _overfull(log) if p > 1], f"the FewCLUE table overflows: {_overfull(log)}\n{tex}"


def test_the_statement_fits_the_acl_page(clues_studies, tmp_path):
    for study in clues_studies:
        tex = render_statement(build_statement(study=study), "latex")
        assert r"\hline" not in tex
        log = _compile(tmp_path, study.slug, tex)
        assert not [p for p in _overfull(log) if p > 1], f"{study.slug}'s statement overflows: {_overfull(log)}"
