"""What create_clues_studies and create_fewclue_studies share: one study a task, made or found, and the report.

Each command says which studies it wants and how one is made; this finds the task and the study, makes
the study if it is missing (a draft, with ``--posted-reward`` set), opens a draft with ``--open`` the way a
person does (through the launch check: a study with a blocker stays a draft, its blockers named), writes one
line a study, then one ``skipped`` line a task that could not have one, and fails if no study is there at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotation.models import Study
from annotation.protocol import languages
from annotation.services.studies import launch, studies
from tasks_app.models import Task


@dataclass(frozen=True)
class Wanted:
    """One study a command wants: its task's name in a "skipped" line, its task's slug, its own slug."""

    label: str
    task_slug: str
    slug: str


def add_open_and_reward(parser: CommandParser) -> None:
    """The options both create_*_studies commands share: --open (through the launch check), --posted-reward."""
    parser.add_argument(
        "--open",
        action="store_true",
        help="Open the studies right away, each only if its launch check names no blocker (check_study).",
    )
    parser.add_argument(
        "--posted-reward",
        metavar="AMOUNT",
        help="The reward posted on the platform per participant, set on each new study (configure_study "
        "--posted-reward sets it later).",
    )


def check_language(language: str) -> None:
    """The ``--language`` option: a language the worker pages are shipped in (or empty), else CommandError."""
    try:
        languages.validate_language(language)
    except ValidationError as exc:
        raise CommandError(f"--language: {exc.messages[0]}") from None


def _amount(raw: str | None) -> Decimal | None:
    if raw is None:
        return None
    try:
        return Decimal(raw)
    except InvalidOperation:
        raise CommandError(f"--posted-reward takes an amount, e.g. 1.50; got {raw!r}.") from None


def command_name(command: BaseCommand) -> str:
    return command.__module__.rsplit(".", 1)[-1]


def _language_change(study: Study, language: str | None) -> str:
    """Give an existing study the ``--language`` asked for, while nobody has joined; the words for its line."""
    if language is None or study.language == language:
        return ""
    shown = language or "the browser's"
    if study.participations.filter(is_preview=False).exists():
        kept = study.language or "the browser's"
        return f", language {kept} kept (workers have joined; --language {shown} not applied)"
    studies.study_update(study=study, language=language, actor="manage.py (--language)")
    study.refresh_from_db()
    return f", language set to {shown}"


def ensure_studies(
    command: BaseCommand,
    wanted: Iterable[Wanted],
    create: Callable[[Task, str], Study],
    *,
    open_now: bool,
    none_ready: str,
    posted_reward: str | None = None,
    language: str | None = None,
) -> None:
    """Find each wanted study, or make it with ``create(task, slug)`` (a draft), and report it;
    ``CommandError(none_ready)`` when no study is there at all. ``language`` (given on the command line):
    an existing study nobody has joined takes it; one with workers keeps its own, and the line says so."""
    problems, ready = [], 0
    reward = _amount(posted_reward)
    for want in wanted:
        try:
            task = Task.objects.filter(slug=want.task_slug).first()
            if task is None:
                raise ValidationError(f"task {want.task_slug} is not in the catalog")
            study = Study.objects.filter(slug=want.slug).first()
            if study is None:
                study, verb = create(task, want.slug), "created"
                if reward is not None:
                    who = f"manage.py {command_name(command)}"
                    study = studies.study_update(study=study, base_reward=reward, actor=who)
            else:
                verb = "exists" + _language_change(study, language)
            if open_now and study.status == Study.Status.DRAFT:
                try:
                    study = launch.open_study(study=study, by_name=f"manage.py {command_name(command)} --open")
                except launch.LaunchBlocked as exc:
                    fixes = "; ".join(f"{f.message} Fix: {f.fix}" for f in exc.check.blockers)
                    command.stderr.write(f"{want.slug}: not opened: {fixes}")
                else:
                    verb = "created" if verb == "created" else f"{verb}, opened"
        except ValidationError as exc:
            problems.append(f"{want.label}: {'; '.join(exc.messages)}")
            continue
        ready += 1
        command.stdout.write(f"{want.slug}: {verb} ({study.status}) -> /join/{want.slug}/")
    for problem in problems:
        command.stderr.write(f"skipped {problem}")
    if not ready:
        raise CommandError(none_ready)
