"""import_fewclue on the real FewCLUE datasets/ (FEWCLUE_DIR; skipped when unset): all nine tasks, every
finding it makes, the sizes of every set, idempotence."""

import time
from collections import Counter

import pytest

from tasks_app.importing.fewclue.service import import_fewclue
from tasks_app.models import Example, ExampleSet, Label
from tasks_app.paper import FEWCLUE_LABEL_COUNTS, FEWCLUE_TEST_SET_SIZES

pytestmark = [pytest.mark.fewclue, pytest.mark.django_db]

# Items per file, as the repository holds them: (train_k, dev_k, train_few_all, dev_few_all).
SET_SIZES = {
    "eprstmt": (32, 32, 160, 160),
    "csldcp": (536, 536, 2036, 2068),
    "tnews": (240, 240, 1185, 1098),
    "iflytek": (928, 690, 3024, 1373),
    "ocnli": (32, 32, 160, 160),
    "bustm": (32, 32, 160, 160),
    "csl": (32, 32, 160, 160),
    "chid": (42, 42, 202, 202),
    "cluewsc": (32, 32, 160, 159),
}

# duplicate_content findings per file: an item already on an earlier line of the same file.
REPEATED_ITEMS = {
    ("duplicate_content", file): n
    for file, n in {
        "bustm/dev_few_all.json": 4,
        "bustm/train_few_all.json": 4,
        "cluewsc/dev_0.json": 1,
        "cluewsc/dev_1.json": 5,
        "cluewsc/dev_3.json": 2,
        "cluewsc/dev_few_all.json": 39,
        "cluewsc/test_public.json": 3,
        "cluewsc/train_0.json": 1,
        "cluewsc/train_2.json": 1,
        "cluewsc/train_few_all.json": 8,
        "csl/dev_2.json": 1,
        "csl/dev_few_all.json": 2,
        "csl/test_public.json": 16,
        "csl/train_few_all.json": 1,
        "eprstmt/dev_0.json": 1,
        "eprstmt/dev_2.json": 1,
        "eprstmt/dev_4.json": 1,
        "eprstmt/dev_few_all.json": 25,
        "eprstmt/train_1.json": 1,
        "eprstmt/train_2.json": 1,
        "eprstmt/train_3.json": 4,
        "eprstmt/train_4.json": 1,
        "eprstmt/train_few_all.json": 29,
        "ocnli/dev_few_all.json": 2,
    }.items()
}


@pytest.mark.timeout(600)
def test_the_real_repository_imports_all_nine_tasks(fewclue_dir):
    started = time.monotonic()
    result = import_fewclue(path=fewclue_dir)
    seconds = time.monotonic() - started
    assert result.written
    print(f"imported nine FewCLUE tasks in {seconds:.1f} s: {Example.objects.count()} examples")

    kinds = Counter((f.kind, f.file) for f in result.findings if f.kind != "paper_comparison")
    # CSLDCP's public test set gives 49 ids to two different abstracts each, and some files hold the
    # same item twice under two ids (the few_all files repeat the items their splits share). CSL's
    # test_public holds two items twice with opposite gold, and two of its items are in dev_2 and
    # dev_few_all too (tests/studies/test_fewclue_sources.py names them).
    assert kinds == {
        ("id_repeated", "csldcp/test_public.json"): 49,
        **REPEATED_ITEMS,
        ("contradictory_gold", "csl/test_public.json"): 2,
        ("test_overlap", "csl/dev_2.json"): 2,
        ("test_overlap", "csl/dev_few_all.json"): 2,
    }
    comparison = [f.message for f in result.findings if f.kind == "paper_comparison"]
    # Every size and label count as the paper's Table 1 gives it, but CSL's test set: 2838 items, the paper 2828.
    assert sum("; as in the paper" in m for m in comparison) == 11 and len(comparison) == 12
    assert any(m.startswith("test_public: 2838 items; the paper has 2828, the file +10") for m in comparison)

    for folder, (train, dev, train_all, dev_all) in SET_SIZES.items():
        slug = f"fewclue-{folder}"
        sizes = {s.name: s.items.count() for s in ExampleSet.objects.filter(task__slug=slug)}
        assert sizes == {
            "test_public": FEWCLUE_TEST_SET_SIZES[folder] + (10 if folder == "csl" else 0),
            **{f"train_{k}": train for k in range(5)},
            **{f"dev_{k}": dev for k in range(5)},
            "train_few_all": train_all,
            "dev_few_all": dev_all,
        }, folder
        if folder in FEWCLUE_LABEL_COUNTS:
            assert Label.objects.filter(task__slug=slug).count() == FEWCLUE_LABEL_COUNTS[folder]

    chid = Example.objects.filter(task__slug="fewclue-chid")
    assert all(len(e.choices) == 7 and e.context.count("#idiom#") == 1 for e in chid)
    for wsc in Example.objects.filter(task__slug="fewclue-cluewsc"):
        assert [m["role"] for m in wsc.marks] == ["span1", "span2"]
        assert all(wsc.context[m["start"] : m["end"]] == m["text"] for m in wsc.marks)

    again = import_fewclue(path=fewclue_dir)
    assert all(t.stats.examples_created == 0 and t.stats.sets_written == 0 for t in again.tasks)
