"""The scratch database a rehearsal runs on, and the copy of a study's design that goes into it.

The copy is Django's serialisation of the rows that make the design: the task with its labels, examples,
training splits, example sets and their items (and its model runs, for the tables' model rows), then the
study, its conditions and attention checks (their texts, consent, survey, codes and pay are the study's
own fields). No worker, participation or answer is copied. The real database is only read.

An empty scratch database is a copy of a migrated template, made once per set of migrations (their files and
Django's version name it): a SQLite file in the temporary folder, or a PostgreSQL template database
(``rehearsal_template_<key>``) on the real database's server. Migrating takes longer than a whole rehearsal's
crowd; a copy takes a fraction of a second.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import django
from django.core import serializers
from django.db import DatabaseError, connection
from django.db.migrations.loader import MigrationLoader

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


Migrate = Callable[[str], None]  # migrates the database at this URL (a child process: the real one is only read)


def migrations_key() -> str:
    """What names a template: every migration file on disk (content included) and Django's version."""
    digest = hashlib.sha256(django.get_version().encode())
    loader = MigrationLoader(None, ignore_no_migrations=True)
    for app, name in sorted(loader.disk_migrations):
        module = sys.modules[type(loader.disk_migrations[app, name]).__module__]
        digest.update(f"{app}.{name}".encode())
        digest.update(Path(module.__file__ or "").read_bytes())
    return digest.hexdigest()[:16]


def template_directory() -> Path:
    return Path(os.environ.get("REHEARSAL_TEMPLATE_DIR") or Path(tempfile.gettempdir()) / "annotation-rehearsal")


def _sqlite_copy(source: Path, target: Path) -> None:
    """A consistent copy, whatever the source's write-ahead log holds (SQLite's backup API)."""
    src = sqlite3.connect(source)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


def _sqlite_template(migrate: Migrate) -> Path:
    folder = template_directory()
    folder.mkdir(parents=True, exist_ok=True)
    template = folder / f"template-{migrations_key()}.sqlite3"
    if not template.exists():
        # Built beside it and moved into place whole: a rehearsal running at the same time builds its own.
        building = Path(tempfile.mkdtemp(prefix="building-", dir=folder))
        try:
            migrate(f"sqlite:///{building / 'db.sqlite3'}")
            _sqlite_copy(building / "db.sqlite3", building / "template.sqlite3")
            os.replace(building / "template.sqlite3", template)
        finally:
            shutil.rmtree(building, ignore_errors=True)
    return template


def create_scratch(
    *, engine: str | None = None, directory: Path | None = None, migrate: Migrate | None = None
) -> ScratchDatabase:
    """An empty scratch database like the real one: a new SQLite file, or a new PostgreSQL database on the
    same server when the real one is PostgreSQL (the role must be allowed to create databases). With
    ``migrate``, a migrated one: a copy of the template (made first with ``migrate`` if there is none)."""
    directory = directory or Path(tempfile.mkdtemp(prefix="rehearsal-"))
    real = connection.settings_dict
    engine = engine or ("postgresql" if connection.vendor == "postgresql" else "sqlite")
    if engine == "sqlite":
        path = directory / "rehearsal.sqlite3"
        if migrate is not None:
            _sqlite_copy(_sqlite_template(migrate), path)
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
    if migrate is None:
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}"')
    else:
        template = _postgres_template(migrate)
        with connection.cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return ScratchDatabase(url=_postgres_url(name), name=name, engine="postgresql", directory=directory)


def _postgres_url(name: str) -> str:
    real = connection.settings_dict
    user = quote(real.get("USER") or "", safe="")
    password = quote(real.get("PASSWORD") or "", safe="")
    auth = f"{user}:{password}@" if password else f"{user}@" if user else ""
    host = real.get("HOST") or "127.0.0.1"
    port = f":{real['PORT']}" if real.get("PORT") else ""
    return f"postgres://{auth}{host}{port}/{name}"


def _exists(database: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database])
        return cursor.fetchone() is not None


def _postgres_template(migrate: Migrate) -> str:
    """The template database of these migrations on the real database's server, made if missing: migrated
    under a name of its own, then renamed (a rehearsal that loses the race drops its own)."""
    template = f"rehearsal_template_{migrations_key()}"
    if _exists(template):
        return template
    building = f"rehearsal_building_{secrets.token_hex(6)}"
    with connection.cursor() as cursor:
        cursor.execute(f'CREATE DATABASE "{building}"')
    try:
        migrate(_postgres_url(building))
        try:
            with connection.cursor() as cursor:
                cursor.execute(f'ALTER DATABASE "{building}" RENAME TO "{template}"')
        except DatabaseError:
            if not _exists(template):  # not lost to a rehearsal that made the same template meanwhile
                raise
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f'DROP DATABASE IF EXISTS "{building}" WITH (FORCE)')
    return template
