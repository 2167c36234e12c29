"""Shared fixtures. Tests run on SQLite by default; set DATABASE_URL for PostgreSQL."""
import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
CLUES_DIR = Path(os.environ.get("CLUES_DIR", REPO_ROOT.parent / "shared" / "clues"))


@pytest.fixture(scope="session")
def clues_dir() -> Path:
    """The real CLUES release beside the repo; tests that need it skip when absent."""
    if not (CLUES_DIR / "SST-2").is_dir():
        pytest.skip(f"CLUES release not found at {CLUES_DIR} (set CLUES_DIR)")
    return CLUES_DIR


def pytest_collection_modifyitems(config, items):
    from django.db import connection

    on_postgres = connection.vendor == "postgresql"
    integration = os.environ.get("CELERY_INTEGRATION") == "1"
    for item in items:
        if "postgres" in item.keywords and not on_postgres:
            item.add_marker(pytest.mark.skip(reason="needs PostgreSQL (set DATABASE_URL)"))
        if "celery_worker" in item.keywords and not integration:
            item.add_marker(pytest.mark.skip(reason="needs a real Celery worker (CELERY_INTEGRATION=1)"))
