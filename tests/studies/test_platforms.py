"""Reading the platforms' entry parameters (no database); where finished workers go: test_outcomes."""

import pytest

from annotation.services.state.platforms import (
    BadEntry,
    entry_links,
    parse_entry,
    prolific_redirect_url,
)


def test_prolific_parameters_identify_the_participant_and_keep_the_session():
    params = parse_entry({"PROLIFIC_PID": "5f1a2b", "STUDY_ID": "st1", "SESSION_ID": "se1", "other": "x"})
    assert (params.platform, params.external_id, params.preview) == ("prolific", "5f1a2b", False)
    assert params.platform_data == {"STUDY_ID": "st1", "SESSION_ID": "se1"}


def test_mturk_parameters_keep_assignment_hit_and_submit_address():
    params = parse_entry(
        {
            "workerId": "A1B2",
            "assignmentId": "ASG",
            "hitId": "HIT",
            "turkSubmitTo": "https://workersandbox.mturk.com",
        }
    )
    assert (params.platform, params.external_id) == ("mturk", "A1B2")
    assert params.platform_data == {
        "assignmentId": "ASG",
        "hitId": "HIT",
        "turkSubmitTo": "https://workersandbox.mturk.com",
    }


def test_mturk_preview_has_no_worker_and_is_a_preview():
    params = parse_entry({"assignmentId": "ASSIGNMENT_ID_NOT_AVAILABLE", "hitId": "HIT"})
    assert params.preview and params.platform == "mturk" and params.external_id == ""


def test_plain_worker_id_is_in_house_and_is_stripped():
    params = parse_entry({"worker_id": "  alice "})
    assert (params.platform, params.external_id, params.platform_data) == ("inhouse", "alice", {})


@pytest.mark.parametrize(
    "query, message",
    [
        ({}, "no worker id"),
        ({"worker_id": ""}, "missing or blank"),
        ({"worker_id": "   "}, "missing or blank"),
        ({"PROLIFIC_PID": ""}, "PROLIFIC_PID is missing or blank"),
        ({"assignmentId": "ASG"}, "workerId is missing or blank"),
        ({"worker_id": "x" * 129}, "longer than 128"),
        ({"worker_id": "a b"}, "spaces or control characters"),
        ({"worker_id": "a\x00b"}, "spaces or control characters"),
        ({"workerId": "A1", "assignmentId": "x", "turkSubmitTo": "https://evil.example"}, "not a Mechanical Turk"),
        ({"workerId": "A1", "assignmentId": "x", "turkSubmitTo": "http://www.mturk.com"}, "not a Mechanical Turk"),
    ],
)
def test_bad_entry_parameters_are_refused_with_a_reason(query, message):
    with pytest.raises(BadEntry, match=message):
        parse_entry(query)


def test_a_prolific_redirect_gets_the_code_added_unless_the_url_has_one():
    assert prolific_redirect_url("https://app.prolific.com/submissions/complete", "ABC").endswith("?cc=ABC")
    assert prolific_redirect_url("https://app.prolific.com/submissions/complete?cc=KEEP", "ABC").endswith("cc=KEEP")


def test_entry_links_show_each_platform_s_parameters():
    links = entry_links("https://h/join/s/")
    assert links["prolific"] == (
        "https://h/join/s/?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert links["mturk"] == "https://h/join/s/"
    assert links["inhouse"].startswith("https://h/join/s/?worker_id=")


# --- Worker ids: one text, one worker -----------------------------------------------------


def test_the_id_length_cap_is_the_model_field_length():
    from annotation.models import Worker
    from annotation.services.state.platforms import MAX_ID_LENGTH

    assert Worker._meta.get_field("external_id").max_length == MAX_ID_LENGTH
    assert parse_entry({"worker_id": "x" * MAX_ID_LENGTH}).external_id == "x" * MAX_ID_LENGTH


@pytest.mark.parametrize(
    "value",
    [
        "a\ufffdb",  # what invalid UTF-8 in the link became: two different ids would be one worker
        "\ufffd",
        "alice\u200b",  # zero-width space: invisible, so two ids that look the same would differ
        "a\u00a0b",  # a no-break space inside
        "a\tb",
        "a\x7fb",
    ],
)
def test_ids_with_replacement_invisible_or_space_characters_are_refused(value):
    with pytest.raises(BadEntry, match="worker_id"):
        parse_entry({"worker_id": value})


@pytest.mark.parametrize(
    "raw", ["worker_id=%ff", "worker_id=a%fe", "PROLIFIC_PID=%C3%28", "workerId=%80&assignmentId=A"]
)
def test_an_id_that_is_not_valid_utf8_in_the_raw_query_is_refused(raw):
    from urllib.parse import parse_qsl

    decoded = dict(parse_qsl(raw, errors="replace"))  # what Django hands the view
    with pytest.raises(BadEntry, match="not valid UTF-8"):
        parse_entry(decoded, raw_query=raw)


def test_valid_utf8_in_the_raw_query_is_accepted():
    raw = "worker_id=%C3%A9milie&other=%ff"  # only the parameters read are checked
    assert parse_entry({"worker_id": "émilie", "other": "\ufffd"}, raw_query=raw).external_id == "émilie"


def test_surrounding_white_space_is_trimmed_the_same_way_for_every_platform():
    assert parse_entry({"PROLIFIC_PID": "\t5f1a \n"}).external_id == "5f1a"
    assert parse_entry({"workerId": " A1B2", "assignmentId": "x"}).external_id == "A1B2"
    assert parse_entry({"worker_id": "\u00a0alice\u3000"}).external_id == "alice"
