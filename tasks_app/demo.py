"""The bundled demo data: six small tasks in the CLUES release layout, written for this project.

``demo_data/`` mirrors the release (same folders, prefixes and line shapes,
split 1 only, nested 10/20/30 shots; NER files hold k lines per question
type). Sentences are original; some contexts carry accents and emoji to
exercise offsets.
"""

from pathlib import Path

from tasks_app.importing.service import ImportResult, import_clues

DEMO_DATA_DIR = Path(__file__).resolve().parent / "demo_data"


def import_demo_data() -> ImportResult:
    """Install the six tasks (if missing) and import the demo data; safe to run again."""
    return import_clues(path=DEMO_DATA_DIR)
