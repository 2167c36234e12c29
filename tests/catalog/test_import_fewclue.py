"""import_fewclue on the fixture (tests/fixtures/fewclue, invented text in FewCLUE's layout): each task's
representation, idempotence, and a defective copy of each file kind refused with its reason."""

import json
import re
import shutil
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from tasks_app.importing.fewclue.labels import read_label_file
from tasks_app.importing.fewclue.planning import SET_NAMES
from tasks_app.models import Example, ExampleSet, Label, Task
from tests.conftest import FEWCLUE_FIXTURE

pytestmark = pytest.mark.django_db

FOLDERS = ["eprstmt", "csldcp", "tnews", "iflytek", "ocnli", "bustm", "csl", "chid", "cluewsc"]


FEWCLUE_TASKS = Task.objects.filter(slug__startswith="fewclue-")


def run(*args):
    out = StringIO()
    call_command("import_fewclue", *map(str, args), stdout=out)
    return out.getvalue()


def refused(*args):
    out = StringIO()
    with pytest.raises(CommandError) as raised:
        call_command("import_fewclue", *map(str, args), stdout=out)
    return str(raised.value), out.getvalue()


def example(folder, **lookup):
    return Example.objects.get(task__slug=f"fewclue-{folder}", **lookup)


def test_the_fixture_imports_every_task_with_its_thirteen_sets():
    out = run(FEWCLUE_FIXTURE)
    assert "Imported 9 task(s)." in out
    assert sorted(FEWCLUE_TASKS.values_list("slug", flat=True)) == sorted(f"fewclue-{f}" for f in FOLDERS)
    for folder in FOLDERS:
        task = Task.objects.get(slug=f"fewclue-{folder}")
        assert task.kind == Task.Kind.CLASSIFICATION and task.worker_title and task.description
        sets = {s.name: s for s in ExampleSet.objects.filter(task=task)}
        assert sorted(sets) == sorted(SET_NAMES)
        assert sets["test_public"].role == "test" and sets["dev_0"].role == "named"
        assert sets["test_public"].items.count() == (4 if folder == "csldcp" else 3)
        assert sets["train_3"].items.count() == 2 and sets["dev_few_all"].items.count() == 10
        # few_all holds the very examples of its five splits
        union = set(
            ExampleSet.objects.filter(task=task, name__in=[f"train_{k}" for k in range(5)]).values_list(
                "items__example_id", flat=True
            )
        )
        assert set(sets["train_few_all"].items.values_list("example_id", flat=True)) == union
        assert task.examples.count() == (24 if folder == "csldcp" else 23)


def test_each_task_is_represented_as_documented():
    run(FEWCLUE_FIXTURE)
    labels = {f: list(Label.objects.filter(task__slug=f"fewclue-{f}").values_list("name", flat=True)) for f in FOLDERS}
    assert labels["eprstmt"] == ["Positive", "Negative"]
    assert labels["tnews"] == ["100", "102", "107"]
    assert labels["csldcp"] == ["材料科学与工程", "作物学", "口腔医学"]
    assert labels["iflytek"] == ["0", "1", "2"]
    assert labels["chid"] == [str(i) for i in range(7)]
    assert labels["cluewsc"] == ["true", "false"]
    definitions = dict(Label.objects.filter(task__slug="fewclue-iflytek").values_list("name", "definition"))
    assert definitions == {"0": "打车", "1": "地图导航（简称：导航）", "2": "免费WIFI（简称：WIFI）"}
    assert Label.objects.get(task__slug="fewclue-tnews", name="102").definition == "娱乐（news_entertainment）"

    review = example("eprstmt", source_id="1", in_sets__name="test_public")
    assert isinstance(review.context, str) and review.gold_answers == ["Negative"] and review.question

    # TNEWS: the headline alone, as the paper's example shows it; the keywords stay with the example, unshown.
    headline = example("tnews", source_id="1", in_sets__name="test_public")
    assert headline.context == "标题第1句：关于火车的一段编写的示例文字。"
    assert headline.gold_answers == ["102"] and headline.extra["keywords"] == "火车,示例"
    assert Task.objects.get(slug="fewclue-tnews").segment_titles == []

    abstract = example("csl", source_id="0", in_sets__name="test_public")
    assert abstract.context[1] == "春天，示例" and abstract.extra["keyword"] == ["春天", "示例"]

    pair = example("ocnli", source_id="2", in_sets__name="test_public")
    assert pair.is_sentence_pair and pair.gold_answers == ["contradiction"] and pair.extra["genre"] == "news"

    idiom = example("chid", source_id="2", in_sets__name="test_public")
    assert len(idiom.choices) == 7 and idiom.context.count("#idiom#") == 1
    assert idiom.marks == [
        {
            "start": idiom.context.index("#idiom#"),
            "end": idiom.context.index("#idiom#") + 7,
            "role": "blank",
            "text": "#idiom#",
        }
    ]
    assert idiom.gold_answers == ["2"] and idiom.choices[2] == "对牛弹琴"
    assert "answer" not in idiom.extra and "candidates" not in idiom.extra

    wsc = example("cluewsc", source_id="2", in_sets__name="test_public")
    assert [m["role"] for m in wsc.marks] == ["span1", "span2"]
    assert all(wsc.context[m["start"] : m["end"]] == m["text"] for m in wsc.marks)
    assert wsc.marks[0]["text"] == "图书馆" and wsc.gold_answers == ["true"]
    assert Example.objects.exclude(task__slug__in=["fewclue-chid"]).filter(choices__len__gt=0).count() == 0


def test_a_line_separator_inside_a_text_does_not_split_the_line():
    run(FEWCLUE_FIXTURE)
    assert "\u2028" in example("iflytek", source_id="107").context


def test_tnews_keywords_beside_the_headline_are_an_option():
    call_command("import_fewclue", str(FEWCLUE_FIXTURE), "--task", "tnews", "--tnews-keywords", stdout=StringIO())
    headline = Example.objects.get(task__slug="fewclue-tnews", source_id="1", in_sets__name="test_public")
    assert headline.context == ["标题第1句：关于火车的一段编写的示例文字。", "火车,示例"]
    task = Task.objects.get(slug="fewclue-tnews")
    assert task.segment_titles == ["Headline", "Keywords"]
    assert task.translations["zh-hans"]["segment_titles"] == ["新闻标题", "关键词"]


def test_a_line_separator_inside_a_tnews_label_does_not_split_its_line(tmp_path):
    rows = [
        {"label": "100", "label_desc": "news\u2028story", "label_zh": "故事"},
        {"label": "102", "label_desc": "news_culture", "label_zh": "文化"},
    ]
    (tmp_path / "label_index2en2zh.json").write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\r\n" for r in rows), encoding="utf-8"
    )
    labels, findings = read_label_file("tnews", tmp_path, "label_index2en2zh.json")
    assert findings == []
    assert [(lb.name, lb.definition) for lb in labels] == [
        ("100", "故事（news\u2028story）"),
        ("102", "文化（news_culture）"),
    ]


def test_an_id_used_twice_for_two_items_is_a_warning_and_both_are_kept():
    out = run(FEWCLUE_FIXTURE, "--task", "csldcp")
    assert "id_repeated" in out and "csldcp/test_public.json:4" in out
    assert Example.objects.filter(task__slug="fewclue-csldcp", source_id="1").count() == 2


def test_the_report_compares_with_the_paper():
    out = run(FEWCLUE_FIXTURE, "--task", "iflytek", "--dry-run")
    assert "Compared with FewCLUE" in out
    assert "test_public: 3 items; the paper has 1749" in out and "label set: 3 labels; the paper has 119" in out
    assert "Dry run: nothing was written." in out and not FEWCLUE_TASKS.exists()


def test_reimporting_changes_nothing_and_keeps_admin_edits():
    run(FEWCLUE_FIXTURE)
    Label.objects.filter(task__slug="fewclue-tnews", name="100").update(definition="edited")
    counts = (Example.objects.count(), ExampleSet.objects.count(), Label.objects.count())
    out = run(FEWCLUE_FIXTURE)
    assert (Example.objects.count(), ExampleSet.objects.count(), Label.objects.count()) == counts
    assert out.count("examples 0 new, 0 updated; sets 0 written, 13 unchanged") == 9
    assert Label.objects.get(task__slug="fewclue-tnews", name="100").definition == "edited"


def test_json_lists_the_findings():
    findings = json.loads(run(FEWCLUE_FIXTURE, "--task", "csldcp", "--json", "--dry-run"))
    assert {f["kind"] for f in findings} == {"id_repeated", "paper_comparison"}


def test_a_bad_path_is_a_one_line_error(tmp_path):
    with pytest.raises(CommandError, match="no such directory"):
        run(tmp_path / "absent")
    with pytest.raises(CommandError, match="has no task folder eprstmt"):
        run(tmp_path)


# A defective copy of each file kind: (what to break, the finding's kind and location).
def replace_line(path, number, change):
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[number - 1] = change(lines[number - 1])
    path.write_text("\n".join(lines), encoding="utf-8")


def edit_json_line(path, number, change):
    def edit(text):
        row = json.loads(text)
        change(row)
        return json.dumps(row, ensure_ascii=False)

    replace_line(path, number, edit)


def chid_blanks(row, blanks):
    row["content"] = row["content"].replace("#idiom#", "") + "#idiom#" * blanks


DEFECTS = {
    "missing split": (lambda d: (d / "bustm" / "dev_3.json").unlink(), "missing_split", "bustm/dev_3.json"),
    "malformed JSON": (
        lambda d: replace_line(d / "ocnli" / "train_2.json", 2, lambda s: s[:-3]),
        "malformed_json",
        "ocnli/train_2.json:2",
    ),
    "not UTF-8": (
        lambda d: (d / "csl" / "dev_1.json").write_bytes(b"\xff\xfe\x00"),
        "unreadable_file",
        "csl/dev_1.json",
    ),
    "empty file": (lambda d: (d / "csl" / "train_few_all.json").write_text(""), "empty_file", "csl/train_few_all.json"),
    "duplicate id": (
        lambda d: (d / "eprstmt" / "test_public.json").write_text(
            (d / "eprstmt" / "test_public.json").read_text(encoding="utf-8") * 2, encoding="utf-8"
        ),
        "duplicate_id",
        "eprstmt/test_public.json:4",
    ),
    "label outside the set": (
        lambda d: edit_json_line(d / "eprstmt" / "dev_0.json", 1, lambda r: r.update(label="Neutral")),
        "unknown_label",
        "eprstmt/dev_0.json:1",
    ),
    "TNEWS code outside the label file": (
        lambda d: edit_json_line(d / "tnews" / "train_0.json", 2, lambda r: r.update(label=999)),
        "unknown_label",
        "tnews/train_0.json:2",
    ),
    "missing field": (
        lambda d: edit_json_line(d / "csl" / "test_public.json", 3, lambda r: r.pop("keyword")),
        "missing_field",
        "csl/test_public.json:3",
    ),
    "#idiom# missing": (
        lambda d: edit_json_line(d / "chid" / "test_public.json", 1, lambda r: chid_blanks(r, 0)),
        "idiom_marker",
        "chid/test_public.json:1",
    ),
    "#idiom# repeated": (
        lambda d: edit_json_line(d / "chid" / "dev_4.json", 2, lambda r: chid_blanks(r, 2)),
        "idiom_marker",
        "chid/dev_4.json:2",
    ),
    "six CHID candidates": (
        lambda d: edit_json_line(d / "chid" / "train_1.json", 1, lambda r: r["candidates"].pop()),
        "bad_field",
        "chid/train_1.json:1",
    ),
    "CHID answer beyond the candidates": (
        lambda d: edit_json_line(d / "chid" / "train_1.json", 2, lambda r: r.update(answer=7)),
        "unknown_label",
        "chid/train_1.json:2",
    ),
    "CLUEWSC span index off": (
        lambda d: edit_json_line(d / "cluewsc" / "test_public.json", 2, lambda r: r["target"].update(span2_index=3)),
        "span_mismatch",
        "cluewsc/test_public.json:2",
    ),
    "TNEWS label file malformed": (
        lambda d: replace_line(d / "tnews" / "label_index2en2zh.json", 2, lambda s: s.replace("}", "")),
        "bad_label_file",
        "tnews/label_index2en2zh.json:2",
    ),
    "CSLDCP label named twice": (
        lambda d: (d / "csldcp" / "labels_all.txt").write_text("作物学\n口腔医学\n作物学\n", encoding="utf-8"),
        "bad_label_file",
        "csldcp/labels_all.txt",
    ),
    "IFLYTEK label file not Python": (
        lambda d: replace_line(d / "iflytek" / "label_id2des_desc2short.py", 3, lambda s: s + " ]"),
        "bad_label_file",
        "iflytek/label_id2des_desc2short.py:3",
    ),
    "IFLYTEK label file without its dict": (
        lambda d: (d / "iflytek" / "label_id2des_desc2short.py").write_text("labels = load()\n", encoding="utf-8"),
        "bad_label_file",
        "iflytek/label_id2des_desc2short.py",
    ),
    "label file missing": (
        lambda d: (d / "csldcp" / "labels_all.txt").unlink(),
        "bad_label_file",
        "csldcp/labels_all.txt",
    ),
}


@pytest.mark.parametrize("defect", list(DEFECTS))
def test_a_defective_copy_is_refused_with_its_reason_and_nothing_is_written(tmp_path, defect):
    copy = tmp_path / "datasets"
    shutil.copytree(FEWCLUE_FIXTURE, copy)
    damage, kind, location = DEFECTS[defect]
    damage(copy)
    message, out = refused(copy)
    assert re.fullmatch(r"import failed: \d+ error\(s\) in 1 file\(s\); nothing was imported", message)
    errors = out.split("Errors:")[1]
    assert kind in errors and location in errors, out
    assert not FEWCLUE_TASKS.exists() and not Example.objects.filter(task__slug__startswith="fewclue-").exists()


def test_a_label_name_that_disagrees_with_the_label_file_is_a_warning(tmp_path):
    copy = tmp_path / "datasets"
    shutil.copytree(FEWCLUE_FIXTURE, copy)
    edit_json_line(copy / "tnews" / "dev_2.json", 1, lambda r: r.update(label_desc="news_sports"))
    out = run(copy, "--task", "tnews", "--details")
    assert "tnews/dev_2.json:1" in out and "label_name_mismatch" in out and "Imported 1 task(s)." in out


def test_a_few_all_file_that_is_not_the_union_of_its_splits_is_a_warning(tmp_path):
    copy = tmp_path / "datasets"
    shutil.copytree(FEWCLUE_FIXTURE, copy)
    few_all = copy / "bustm" / "dev_few_all.json"
    few_all.write_text("".join(few_all.read_text(encoding="utf-8").splitlines(True)[1:]), encoding="utf-8")
    out = run(copy, "--task", "bustm", "--details")
    assert "few_all_differs" in out and "1 of theirs not in it" in out


def test_a_named_set_needs_a_name_unique_in_its_task():
    run(FEWCLUE_FIXTURE, "--task", "bustm")
    task = Task.objects.get(slug="fewclue-bustm")
    for fields in ({"name": ""}, {"name": "dev_0"}):
        with pytest.raises(IntegrityError), transaction.atomic():
            ExampleSet.objects.create(task=task, role=ExampleSet.Role.NAMED, **fields)


def test_the_admin_shows_an_items_choices_and_marks(admin_client):
    run(FEWCLUE_FIXTURE, "--task", "chid", "--task", "cluewsc")
    for folder, shown in (("chid", "对牛弹琴"), ("cluewsc", "span2")):
        item = example(folder, source_id="2", in_sets__name="test_public")
        page = admin_client.get(f"/admin/tasks_app/example/{item.pk}/change/").content.decode()
        assert shown in page
    named = ExampleSet.objects.get(task__slug="fewclue-chid", name="dev_4")
    assert admin_client.get(f"/admin/tasks_app/exampleset/{named.pk}/change/").status_code == 200


def test_the_same_item_under_another_id_is_a_warning_and_kept_as_its_own_example(tmp_path):
    copy = tmp_path / "datasets"
    shutil.copytree(FEWCLUE_FIXTURE, copy)
    test = copy / "ocnli" / "test_public.json"
    row = json.loads(test.read_text(encoding="utf-8").split("\n")[0])
    with test.open("a", encoding="utf-8") as out:
        out.write(json.dumps({**row, "id": 99}, ensure_ascii=False) + "\n")
    out = run(copy, "--task", "ocnli", "--details")
    assert "ocnli/test_public.json:4" in out and "duplicate_content" in out and "is the same item as line 1" in out
    assert ExampleSet.objects.get(task__slug="fewclue-ocnli", name="test_public").items.count() == 4


def test_every_task_has_its_worker_texts_in_english_and_in_chinese():
    from tasks_app.texts import texts_for

    run(FEWCLUE_FIXTURE)
    for folder in FOLDERS:
        task = Task.objects.get(slug=f"fewclue-{folder}")
        english, chinese = texts_for(task, "en", labels=()), texts_for(task, "zh-hans", labels=())
        assert english.worker_title.isascii() and english.description.isascii(), folder  # the default: English
        assert english.instructions, folder
        for name in ("worker_title", "description", "instructions"):
            text = getattr(chinese, name)
            assert text != getattr(english, name) and not text.isascii() and "占位" not in text, (folder, name)
        task.full_clean()  # valid Task.translations
