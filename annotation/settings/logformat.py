"""A logging formatter writing one JSON object per line (production settings).

Each line has ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``,
plus ``exception`` (the formatted traceback) when the record carries one, so a
log collector needs no multi-line parsing. Plain stdlib on purpose.
"""

import json
import logging
from datetime import UTC, datetime


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if record.exc_info:
            # Cached on the record like logging.Formatter does, for any other handler.
            record.exc_text = record.exc_text or self.formatException(record.exc_info)
        if record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str)
