"""The scratch database a rehearsal runs on, and the copy of a study's design that goes into it.

The copy is Django's serialisation of the rows that make the design: the task with its labels, examples,
training splits, example sets and their items (and its model runs, for the tables' model rows), then the
study, its conditions and attention checks (their texts, consent, survey, codes and pay are the study's
own fields). No worker, participation or answer is copied. The real database is only read.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.core import serializers
from django.db import connection

from annotation.models import AttentionCheck, ModelRun, Study
from tasks_app.models import Example, ExampleSet, ExampleSetItem, Label, Task, TrainingSplit


class ScratchUnavailable(Exception):
    """The scratch database cannot be made (e.g. the PostgreSQL role may not create databases)."""


def design_json(study: Study) -> str:
    """The study's whole design as a Django fixture (JSON), ready for ``loaddata`` into an empty database."""
    task = study.task
    objects: list = [
        Task.objects.get(pk=task.pk),
        *Label.objects.filter(task=task),
        *TrainingSplit.objects.filter(task=task),
        *Example.objects.filter(task=task),  # with the attention checks' own examples
        *ExampleSet.objects.filter(task=task),
        *ExampleSetItem.objects.filter(example_set__task=task),
        *ModelRun.objects.filter(task=task),
        Study.objects.get(pk=study.pk),
        *study.conditions.all(),
        *AttentionCheck.objects.filter(study=study),
    ]
    return serializers.serialize("json", objects)


@dataclass
class ScratchDatabase:
    """Where the rehearsal's rows go: ``url`` for DATABASE_URL, ``name`` for the steps' guard."""

    url: str
    name: str
    engine: str  # "sqlite" or "postgresql"
    directory: Path  # the run's files (the SQLite file, the fixture, the facts)

    def drop(self, *, keep_files: bool = False) -> None:
        """Drop the database; remove the run's files (the SQLite file among them) unless asked to keep them."""
        if self.engine == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        if not keep_files:
            shutil.rmtree(self.directory, ignore_errors=True)


def create_scratch(*, engine: str | None = None, directory: Path | None = None) -> ScratchDatabase:
    """An empty scratch database like the real one: a new SQLite file, or a new PostgreSQL database on the
    same server when the real one is PostgreSQL (the role must be allowed to create databases)."""
    directory = directory or Path(tempfile.mkdtemp(prefix="rehearsal-"))
    real = connection.settings_dict
    engine = engine or ("postgresql" if connection.vendor == "postgresql" else "sqlite")
    if engine == "sqlite":
        path = directory / "rehearsal.sqlite3"
        return ScratchDatabase(url=f"sqlite:///{path}", name=str(path), engine="sqlite", directory=directory)
    if connection.vendor != "postgresql":
        raise ScratchUnavailable(
            "a PostgreSQL scratch database is made on the real database's PostgreSQL server, and this database "
            f"is {connection.vendor}: rehearse with --scratch sqlite"
        )
    with connection.cursor() as cursor:
        cursor.execute("SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user")
        row = cursor.fetchone()
        if not row or not row[0]:
            raise ScratchUnavailable(
                f"the PostgreSQL role {real.get('USER')!r} may not create databases, so the rehearsal cannot make "
                "its scratch database: grant it CREATEDB (ALTER ROLE ... CREATEDB), or rehearse on SQLite "
                "with --scratch sqlite"
            )
        name = f"rehearsal_{secrets.token_hex(6)}"
        cursor.execute(f'CREATE DATABASE "{name}"')
    user = quote(real.get("USER") or "", safe="")
    password = quote(real.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else f"{user}@" if user else ""
    host = real.get("HOST") or "127.0.0.1"
    port = f":{real['PORT']}" if real.get("PORT") else ""
    url = f"postgres://{auth}{host}{port}/{name}"
    return ScratchDatabase(url=url, name=name, engine="postgresql", directory=directory)
