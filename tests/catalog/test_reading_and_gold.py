"""Parsing lines of every shape, locating gold strings and building gold fields (no database)."""

import json

import pytest

from tasks_app.importing.gold import build_gold
from tasks_app.importing.locating import locate
from tasks_app.importing.nesting import check_nested, nested_prefixes
from tasks_app.importing.reading import parse_line, read_jsonl
from tasks_app.importing.validation import TaskSpec, find_reused_ids, validate_file

PER_QUESTION = "List all the people names in the context"
LOC_QUESTION = "List all the locations in the context"
NER = TaskSpec(slug="ner", kind="span", question_types={PER_QUESTION: "PER", LOC_QUESTION: "LOC"})
SST = TaskSpec(slug="sst2", kind="classification", labels=("positive", "negative"))


def record(data, line=1, file="f.jsonl"):
    parsed, findings = parse_line(json.dumps(data, ensure_ascii=False), task="t", file=file, line=line)
    assert findings == []
    return parsed


def gold(data, locate_spans=True):
    return build_gold(record(data), task="t", locate_spans=locate_spans)


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("{not json", "malformed_json"),
        ("[1, 2]", "malformed_json"),
        ('{"id": 1, "context": "c", "question": "q"}', "missing_field"),
        ('{"id": 1, "context": "c", "question": "q", "answer": "positive"}', "bad_field"),
        ('{"id": 1, "context": ["only one"], "question": "q", "answer": []}', "bad_field"),
        ('{"id": 1, "context": "c", "question": "q", "answer": [{"start": 1}]}', "bad_field"),
        ('{"id": 1, "context": "c", "question": "q", "answer": [{"text": "c", "answer_start": "0"}]}', "bad_field"),
        ('{"id": null, "context": "c", "question": "q", "answer": []}', "bad_field"),
        ('{"id": 1, "context": "c", "question": "q", "answer": [], "entities": [{"start": 0}]}', "bad_field"),
        ('{"id": 1, "context": "a\\u0000b", "question": "q", "answer": []}', "bad_field"),
        ('{"id": 1, "context": "c", "question": "q", "answer": ["\\u0000"]}', "bad_field"),
        ("[" * 100_000 + "]" * 100_000, "malformed_json"),
    ],
)
def test_bad_lines_become_error_findings_with_file_and_line(text, kind):
    parsed, findings = parse_line(text, task="t", file="x/f.jsonl", line=7)
    assert parsed is None
    assert [(f.kind, f.file, f.line, f.is_error) for f in findings] == [(kind, "x/f.jsonl", 7, True)]


def test_fields_nested_beyond_the_limit_are_refused_and_never_raise():
    def line(depth):
        return '{"id": 1, "context": "c", "question": "q", "answer": [], "x": ' + "[" * depth + "]" * depth + "}"

    assert parse_line(line(40), task="t", file="f.jsonl", line=1)[1] == []
    for depth in (60, 900, 990, 1100):  # around the recursion limit, json or the check gives up: a finding either way
        parsed, findings = parse_line(line(depth), task="t", file="f.jsonl", line=1)
        assert parsed is None and [f.kind for f in findings] in (["bad_field"], ["malformed_json"])
    assert "nested more than 50 levels" in parse_line(line(60), task="t", file="f.jsonl", line=1)[1][0].message


def test_identity_is_content_so_files_that_renumber_share_examples():
    # SST-2 gives the same sentence another id in each training file of a split.
    a = record({"id": 1, "context": "good", "question": "q", "answer": ["positive"]}, file="sst_train_10_1.jsonl")
    b = record({"id": 7, "context": "good", "question": "q", "answer": ["positive"]}, file="sst_train_20_1.jsonl")
    assert a.fingerprint == b.fingerprint == a.content_key
    assert (a.source_id, b.source_id) == ("1", "7")


def test_a_content_repeated_within_one_file_stays_as_many_examples(tmp_path):
    line = {"context": "ATLANTIC DIVISION", "question": "q", "answer": [""]}
    path = tmp_path / "conll_test.jsonl"
    path.write_text("\n".join(json.dumps({"id": i, **line}) for i in ("226", "463")) + "\n")
    records, findings = read_jsonl(path, task="t", display="conll_test.jsonl")
    assert findings == []
    assert len({r.fingerprint for r in records}) == 2
    assert len({r.content_key for r in records}) == 1


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_unicode_line_break_inside_a_string_does_not_split_the_record(tmp_path, separator):
    """JSON allows U+2028, U+2029 and U+0085 raw inside a string; str.splitlines() would end a line there."""
    rows = [
        {"id": 1, "context": f"first part{separator}second part", "question": "q", "answer": ["positive"]},
        {"id": 2, "context": "plain", "question": "q", "answer": ["negative"]},
    ]
    path = tmp_path / "sst_test.jsonl"
    path.write_text("\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n", encoding="utf-8")
    assert separator in path.read_text(encoding="utf-8")  # raw, not escaped
    records, findings = read_jsonl(path, task="t", display="sst_test.jsonl")
    assert findings == []
    assert [(r.line, r.source_id, r.context) for r in records] == [
        (1, "1", f"first part{separator}second part"),
        (2, "2", "plain"),
    ]


def test_locate_finds_every_occurrence_on_word_boundaries():
    context = "Alan met Alan and Alana in Alanville ."
    assert locate(context, "Alan") == [(0, 4), (9, 13)]


def test_locate_falls_back_to_substrings_when_no_word_match():
    assert locate("the USA team", "US") == [(4, 6)]


def test_locate_counts_python_indices_past_emoji_and_accents():
    context = "🎬 Søren Holm visited Aarhus ."
    assert [context[s:e] for s, e in locate(context, "Søren Holm")] == ["Søren Holm"]
    assert locate(context, "Søren Holm") == [(2, 12)]


def test_empty_string_answer_is_the_empty_set():
    g = gold({"id": "1_1", "context": "In Belgrade :", "question": PER_QUESTION, "answer": [""]})
    assert g.answers == [] and g.spans == [] and g.findings == []


def test_ner_gold_lists_all_occurrences_and_reports_missing_strings():
    g = gold({"id": "1", "context": "Ann saw Bob and Ann .", "question": "q", "answer": ["Ann", "Ann", "Zed"]})
    assert g.answers == ["Ann", "Zed"]
    assert g.spans == [{"text": "Ann", "start": 0, "end": 3}, {"text": "Ann", "start": 16, "end": 19}]
    assert [f.kind for f in g.findings] == ["gold_not_found"]
    assert g.alternatives == [] and "answer_raw" not in g.extra


def test_classification_labels_are_not_located():
    g = gold(
        {"id": 1, "context": "a fine film", "question": "positive or negative?", "answer": ["positive"]},
        locate_spans=False,
    )
    assert g.answers == ["positive"] and g.spans == [] and g.findings == []


def test_squad_answers_prefer_the_given_start_and_keep_other_occurrences():
    context = "Paris is big. I love Paris."
    g = gold(
        {
            "id": "q",
            "context": context,
            "question": "Which city?",
            "is_impossible": False,
            "answer": [
                {"text": "Paris", "answer_start": 21},
                {"text": "Paris", "answer_start": 21},
                {"text": "love Paris", "answer_start": 16},
            ],
        }
    )
    assert g.answers == ["Paris", "love Paris"]
    assert g.spans[0] == {"text": "Paris", "start": 21, "end": 26}
    assert {"text": "Paris", "start": 0, "end": 5} in g.spans
    assert g.alternatives == [["Paris"], ["love Paris"]]
    assert g.extra["answer_raw"][0] == {"text": "Paris", "answer_start": 21}
    assert g.extra["is_impossible"] is False


def test_wrong_answer_start_is_a_warning_and_the_text_is_still_located():
    g = gold({"id": "q", "context": "x Paris", "question": "q", "answer": [{"text": "Paris", "answer_start": 0}]})
    assert [f.kind for f in g.findings] == ["offset_mismatch"]
    assert g.spans == [{"text": "Paris", "start": 2, "end": 7}]


def test_impossible_question_has_empty_gold_and_keeps_plausible_answers_verbatim():
    plausible = [{"text": "Paris", "answer_start": 0}]
    g = gold(
        {
            "id": "q",
            "context": "Paris",
            "question": "q",
            "answer": [],
            "is_impossible": True,
            "plausible_answers": plausible,
        }
    )
    assert g.answers == [] and g.spans == [] and g.alternatives == []
    assert g.extra == {"is_impossible": True, "plausible_answers": plausible}


def test_record_entities_are_kept_and_converted_to_exclusive_ends():
    context = "Ann met Bob.\n@highlight\nBob smiles"
    g = gold(
        {
            "id": "r",
            "context": context,
            "question": "@placeholder met Bob.",
            "is_impossible": False,
            "entities": [{"start": 0, "end": 2}, {"start": 8, "end": 10}, {"start": 30, "end": 99}],
            "answer": [{"text": "Ann", "answer_start": 0}],
        }
    )
    assert g.extra["entities"][0] == {"start": 0, "end": 2}
    assert g.extra["entities_exclusive"] == [
        {"start": 0, "end": 3, "text": "Ann"},
        {"start": 8, "end": 11, "text": "Bob"},
    ]
    assert [f.kind for f in g.findings] == ["entity_out_of_range"]


def test_validate_file_flags_duplicate_ids_labels_and_questions():
    records = [
        record({"id": 1, "context": "a", "question": "positive or negative?", "answer": ["positive"]}, line=1),
        record({"id": 1, "context": "b", "question": "positive or negative?", "answer": ["great"]}, line=2),
    ]
    kinds = [(f.kind, f.line) for f in validate_file(records, spec=SST, file="f.jsonl")]
    assert kinds == [("duplicate_id", 2), ("unknown_label", 2)]


def test_question_naming_a_wrong_label_is_reported_once_per_file():
    spec = TaskSpec(slug="mnli", kind="classification", labels=("entailment", "neutral", "contradiction"))
    records = [
        record(
            {
                "id": i,
                "context": ["p", f"h{i}"],
                "question": "entailment, contraction, or neutral?",
                "answer": ["neutral"],
            },
            line=i,
        )
        for i in (1, 2, 3)
    ]
    findings = validate_file(records, spec=spec, file="f.jsonl")
    assert [(f.kind, f.line) for f in findings] == [("question_label_mismatch", 1)]
    assert "contradiction" in findings[0].message and "3 line(s)" in findings[0].message


def test_question_types_are_assigned_and_unknown_questions_reported():
    records = [
        record({"id": "1", "context": "c", "question": PER_QUESTION, "answer": [""]}),
        record({"id": "2", "context": "c", "question": "List all the dogs", "answer": [""]}, line=2),
    ]
    findings = validate_file(records, spec=NER, file="f.jsonl")
    assert [r.question_type for r in records] == ["PER", ""]
    assert [(f.kind, f.line) for f in findings] == [("unknown_question", 2)]


def test_ids_reused_across_files_for_other_content_are_reported_on_the_later_line():
    first = [record({"id": 1, "context": "a", "question": "q", "answer": ["positive"]}, file="test.jsonl")]
    second = [
        record({"id": 1, "context": "b", "question": "q", "answer": ["positive"]}, file="train.jsonl", line=4),
        record({"id": 2, "context": "a", "question": "q", "answer": ["positive"]}, file="train.jsonl", line=5),
    ]
    findings = find_reused_ids([first, second], task="t")
    assert [(f.kind, f.file, f.line) for f in findings] == [("id_reused", "train.jsonl", 4)]


def _ner_lines(n, offset=0):
    out = []
    for i in range(n):
        for q, qt in ((PER_QUESTION, "PER"), (LOC_QUESTION, "LOC")):
            r = record({"id": f"{i + offset}_{qt}", "context": f"sentence {i + offset}", "question": q, "answer": [""]})
            r.question_type = qt
            out.append(r)
    return out


def test_nesting_is_checked_per_question_type_and_prefixes_are_built_per_type():
    thirty = _ner_lines(3)
    ten = _ner_lines(1, offset=7)  # not inside the larger file
    findings = check_nested({1: ten, 3: thirty}, task="t", split=2, names={1: "a_1", 3: "a_3"})
    assert [f.kind for f in findings] == ["split_not_nested"]
    assert "LOC: 1" in findings[0].message and "PER: 1" in findings[0].message
    built = nested_prefixes(thirty, [1, 2])
    assert [r.source_id for r in built[1]] == ["0_PER", "0_LOC"]
    assert [r.source_id for r in built[2]] == ["0_PER", "0_LOC", "1_PER", "1_LOC"]
    assert check_nested({1: built[1], 2: built[2], 3: thirty}, task="t", split=2, names={1: "", 2: "", 3: ""}) == []
