"""Entry links: a turkSubmitTo that is not MTurk's is a warning; other refusals and entries are debug."""

import logging

import pytest

from annotation.services.state.platforms import BadEntry, parse_entry

LOGGER = "annotation.services.state.platforms"


def test_a_foreign_turk_submit_to_is_a_warning_naming_the_host(caplog):
    query = {"workerId": "W1", "assignmentId": "A1", "turkSubmitTo": "https://evil.example/collect"}
    with caplog.at_level(logging.DEBUG, logger=LOGGER), pytest.raises(BadEntry):
        parse_entry(query)
    [warning] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "'evil.example'" in warning.getMessage()


def test_an_ordinary_bad_link_and_an_entry_are_debug_only(caplog):
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        with pytest.raises(BadEntry):
            parse_entry({"worker_id": " "})
        parse_entry({"PROLIFIC_PID": "P123", "STUDY_ID": "S"})
    assert {r.levelno for r in caplog.records if r.name == LOGGER} == {logging.DEBUG}
    assert any("a prolific worker" in r.getMessage() for r in caplog.records)
    assert "P123" not in caplog.text  # logs keep no platform identifier (docs/participants.md)
