"""The production log formatter: one JSON object per line, whatever the message holds."""

import json
import logging
import sys

from annotation.settings.logformat import JsonFormatter


def _record(message: str, *args, exc_info=None) -> logging.LogRecord:
    return logging.LogRecord("annotation.example", logging.ERROR, __file__, 1, message, args, exc_info)


def test_a_record_is_one_line_of_json_with_time_level_logger_and_message():
    line = JsonFormatter().format(_record("two\nlines for %s ✓", "alice"))
    assert "\n" not in line
    entry = json.loads(line)
    assert entry.keys() == {"time", "level", "logger", "message"}
    assert (entry["level"], entry["logger"], entry["message"]) == (
        "ERROR",
        "annotation.example",
        "two\nlines for alice ✓",
    )


def test_an_exception_comes_with_its_traceback():
    try:
        raise ValueError("bad value")
    except ValueError:
        record = _record("failed", exc_info=sys.exc_info())
    entry = json.loads(JsonFormatter().format(record))
    assert entry["exception"].startswith("Traceback (most recent call last):")
    assert entry["exception"].endswith("ValueError: bad value")
