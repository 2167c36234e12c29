"""Benchmark: import the whole CLUES release into a fresh SQLite database.

    .venv/bin/python bench/import_release.py [PATH_TO_RELEASE]

Migrations run first and are not timed. Prints one JSON object: the wall time
of the first import (6 tasks, test set + 5 splits x 3 shot levels) and of a
second, idempotent re-import, the CPU seconds this process spent on each (a
steadier figure when other work shares the machine), the load average before
the run, and the row counts.
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
        os.environ["DJANGO_SETTINGS_MODULE"] = "annotation.settings.base"
        import django

        django.setup()
        from django.core.management import call_command

        from tasks_app.importing.service import import_clues
        from tasks_app.models import Example, ExampleSet, ExampleSetItem

        call_command("migrate", verbosity=0)
        load_before = os.getloadavg()[0]
        started, cpu = time.perf_counter(), time.process_time()
        result = import_clues(path=release)
        first, first_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        import_clues(path=release)
        again, again_cpu = time.perf_counter() - started, time.process_time() - cpu
        print(
            json.dumps(
                {
                    "release": str(release),
                    "database": "sqlite (fresh file)",
                    "import_seconds": round(first, 3),
                    "import_cpu_seconds": round(first_cpu, 3),
                    "reimport_seconds": round(again, 3),
                    "reimport_cpu_seconds": round(again_cpu, 3),
                    "load_average_1min_before": round(load_before, 2),
                    "tasks": len(result.tasks),
                    "examples": Example.objects.count(),
                    "example_sets": ExampleSet.objects.count(),
                    "set_items": ExampleSetItem.objects.count(),
                    "findings": len(result.findings),
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
