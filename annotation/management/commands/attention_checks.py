"""A study's attention checks from the shell.

    attention_checks <study> --every 10          # template checks at items 10, 20, ... of the test step
    attention_checks <study> --positions 3,17    # template checks at those items
    attention_checks <study> --add 5 --context "..." --question "..." --label negative   # or --span orange
    attention_checks <study>                     # list the checks
    attention_checks <study> --report [--format csv|json]   # per worker: passed / failed / decision
    attention_checks <study> --fail-limit 1 --action exclude  # the rule: who fails 1 check is excluded
                                                              # (0: no rule; with --every etc. too)

Any invalid definition stops the command with the reason, and nothing is stored.
"""

from __future__ import annotations

import csv
import json
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.services.studies import studies
from annotation.services.verdicts import attention
from tasks_app.management.base import ProjectCommand

WHO = "manage.py attention_checks"  # the audit trail's name for what the command does


def _positions(raw: str) -> list[int]:
    try:
        return [int(p) for p in raw.split(",") if p.strip()]
    except ValueError:
        raise CommandError(f"--positions takes item numbers separated by commas, e.g. 3,17; not {raw!r}") from None


class Command(ProjectCommand):
    help = "List, add (written or from a template) and report a study's attention checks."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="Study slug")
        group = parser.add_mutually_exclusive_group()
        group.add_argument("--every", type=int, metavar="N", help="Template checks every N test items.")
        group.add_argument("--positions", metavar="P,Q", help="Template checks at these item numbers.")
        group.add_argument("--add", type=int, metavar="POSITION", help="A check written here, at this item number.")
        group.add_argument("--report", action="store_true", help="Per worker: checks passed and failed.")
        parser.add_argument("--context", default="", help="--add: the text the worker reads.")
        parser.add_argument("--question", default="", help="--add: the question, stating the answer.")
        parser.add_argument("--label", default="", help="--add, classification: the label to choose.")
        parser.add_argument("--span", action="append", default=[], help="--add, span task: a word to select.")
        parser.add_argument("--format", choices=["text", "csv", "json"], default="text", help="--report's format.")
        parser.add_argument(
            "--fail-limit",
            type=int,
            metavar="N",
            help="The rule: a worker who fails N checks or more is flagged or excluded (--action); 0: no rule.",
        )
        parser.add_argument(
            "--action", choices=Study.AttentionAction.values, help="What the rule does: review (flag) or exclude."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        study = Study.objects.select_related("task").filter(slug=options["study"]).first()
        if study is None:
            raise CommandError(f"no study with slug {options['study']!r}")
        study = self._rule(study, options["fail_limit"], options["action"])
        try:
            if options["every"] is not None:
                taken = set(study.attention_checks.values_list("position", flat=True))
                wanted = [p for p in attention.definitions.positions_every(study, options["every"]) if p not in taken]
                self._made(attention.definitions.generate(study=study, positions=wanted, actor=WHO))
            elif options["positions"] is not None:
                positions = _positions(options["positions"])
                self._made(attention.definitions.generate(study=study, positions=positions, actor=WHO))
            elif options["add"] is not None:
                check = attention.definitions.create_check(
                    study=study,
                    position=options["add"],
                    context=options["context"],
                    question=options["question"],
                    expected_label=options["label"],
                    expected_spans=options["span"],
                    actor=WHO,
                )
                self._made([check])
            elif options["report"]:
                self._report(study, options["format"])
                return
        except attention.definitions.AttentionCheckError as exc:
            raise CommandError(f"{exc.field}: {exc.message} (nothing was stored)") from None
        for check in study.attention_checks.order_by("position"):
            expected = check.expected_label or ", ".join(check.expected_spans)
            self.stdout.write(f"item {check.position}: [{check.source}] {check.question} -> {expected}")

    def _rule(self, study: Study, limit: int | None, action: str | None) -> Study:
        """Set the attention rule (services.studies.studies.study_update: refused with the reason)."""
        changes: dict[str, Any] = {}
        if limit is not None:
            if limit < 0:
                raise CommandError(f"--fail-limit takes 0 (no rule) or more; got {limit}.")
            changes["attention_fail_limit"] = limit
        if action is not None:
            changes["attention_action"] = action
        if not changes:
            return study
        try:
            study = studies.study_update(study=study, actor=WHO, **changes)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from None
        rule = (
            f"a worker who fails {study.attention_fail_limit} check(s) or more: {study.get_attention_action_display()}"
            if study.attention_fail_limit
            else "no fail limit (failures are only reported)"
        )
        self.stderr.write(f"{study.slug}: attention rule: {rule}")
        return study

    def _made(self, checks: list) -> None:
        self.stdout.write(self.style.SUCCESS(f"added {len(checks)} attention check(s)"))

    def _report(self, study: Study, fmt: str) -> None:
        rows = [r.as_dict() for r in attention.reports.report(study)]
        if fmt == "json":
            self.stdout.write(json.dumps(rows, indent=2))
        elif fmt == "csv":
            writer = csv.DictWriter(self.stdout, fieldnames=attention.reports.REPORT_FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(rows)
        else:
            for r in rows:
                self.stdout.write(
                    f"{r['platform']}:{r['worker']} ({r['shots']}-shot, {r['state']}): "
                    f"{r['passed']} passed, {r['failed']} failed, {r['pending']} pending; {r['decision'] or '-'}"
                )
