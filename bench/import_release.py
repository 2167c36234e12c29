"""Benchmark: import the whole CLUES release into a fresh SQLite database.

    .venv/bin/python bench/import_release.py [PATH_TO_RELEASE]

Migrations run first and are not timed. Prints one JSON object: the wall time
of the first import (6 tasks, test set + 5 splits x 3 shot levels), of a
second, idempotent re-import, and the row counts.
"""
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


def main() -> int:
    release = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO.parent / "shared" / "clues"
    if not (release / "SST-2").is_dir():
        print(f"CLUES release not found at {release}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/bench.sqlite3"
        os.environ.setdefault("DEBUG", "1")
        os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings"
        import django

        django.setup()
        from django.core.management import call_command

        from tasks_app.importing.service import import_clues
        from tasks_app.models import Example, ExampleSet, ExampleSetItem

        call_command("migrate", verbosity=0)
        started = time.perf_counter()
        result = import_clues(path=release)
        first = time.perf_counter() - started
        started = time.perf_counter()
        import_clues(path=release)
        again = time.perf_counter() - started
        print(json.dumps({
            "release": str(release),
            "database": "sqlite (fresh file)",
            "import_seconds": round(first, 3),
            "reimport_seconds": round(again, 3),
            "tasks": len(result.tasks),
            "examples": Example.objects.count(),
            "example_sets": ExampleSet.objects.count(),
            "set_items": ExampleSetItem.objects.count(),
            "findings": len(result.findings),
        }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
