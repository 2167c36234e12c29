"""Prolific operations on a study: a dry run by default, --run to do it (docs/prolific.md).

manage.py prolific review --study sst2-split1            # who is approved (dry run)
manage.py prolific bonus --study sst2-split1 --run       # pay the pay table's bonuses
manage.py prolific group --study sst2-split1 --json      # add the task's participants to its group
manage.py prolific places --study sst2-split1            # places follow the design; pause when full
manage.py prolific subscribe --url https://study.example.org/hooks/prolific/ --run   # webhooks
manage.py prolific poll --study sst2-split1              # free the slots of returned submissions now
manage.py prolific message --study sst2-split1 --kind bulk --template thanks --run   # write to participants
"""

import json
from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.services.prolific import messages, operations, polling, subscriptions
from annotation.services.prolific.message_templates import TEMPLATES
from tasks_app.management.base import ProjectCommand

HOOK_COMMANDS = ("subscribe", "poll", "message")


class Command(ProjectCommand):
    help = (
        "Approve, pay bonuses, fill the participant group or keep the places in step with the design on Prolific "
        "for a study (dry run unless --run); "
        "subscribe the app's webhook URL; poll a study's submissions."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("operation", choices=(*operations.OPERATIONS, *HOOK_COMMANDS))
        parser.add_argument("--study", help="Study slug (every operation but subscribe).")
        parser.add_argument("--url", help="subscribe: the app's webhook URL, https://<host>/hooks/prolific/.")
        parser.add_argument("--workspace", help="subscribe: the Prolific workspace (default PROLIFIC_WORKSPACE_ID).")
        parser.add_argument("--kind", choices=messages.KINDS, help="message: to one (--to), bulk, or broadcast.")
        parser.add_argument("--to", help="message --kind one: the participant's Prolific id.")
        parser.add_argument("--text", default="", help="message: the text (or a template's).")
        parser.add_argument("--template", choices=sorted(TEMPLATES), help="message: a common message.")
        parser.add_argument("--language", help="message: the template's language (default: the study's, or en).")
        parser.add_argument("--subject", default="", help="message: a broadcast's subject (or the template's).")
        parser.add_argument("--again", default="", help="message: any word, to send a message sent before again.")
        parser.add_argument("--resolve", metavar="KEY", help="message: an uncertain message checked on Prolific.")
        parser.add_argument("--sent", choices=("yes", "no"), help="message --resolve: was it sent?")
        parser.add_argument("--by", default="manage.py prolific", help="message: who sends it (recorded).")
        parser.add_argument("--run", action="store_true", help="Do it (default: only show the plan).")
        parser.add_argument("--json", action="store_true", help="Print the report as JSON.")

    def handle(self, *args: Any, operation: str, study: str | None, run: bool, **options: Any) -> None:
        if operation == "subscribe":
            return self._subscribe(options["url"], options["workspace"], run=run, as_json=options["json"])
        if not study:
            raise CommandError(f"{operation} needs --study SLUG.")
        found = Study.objects.select_related("task").filter(slug=study).first()
        if found is None:
            raise CommandError(f"No study with slug {study!r}.")
        if operation == "poll":
            return self._poll(found)
        if operation == "message":
            return self._message(found, run=run, **options)
        if run:
            try:
                report = operations.run(operation=operation, study=found, actor="manage.py prolific --run")
            except operations.ProlificDisabled as exc:
                raise CommandError(str(exc)) from None
        else:
            report = operations.plan(operation=operation, study=found, actor="manage.py prolific")
        if options["json"]:
            self.stdout.write(_dumps(report.as_dict()))
        else:
            self._table(report)
        if any(row.state in (operations.FAILED, operations.UNCERTAIN) for row in report.rows):
            raise CommandError("Some participants failed or are uncertain: see the report above.")

    def _table(self, report: operations.Report) -> None:
        head = "Dry run (nothing sent; add --run to do it)" if report.dry_run else "Run"
        self.stdout.write(f"{head}: {report.operation} for {report.study}")
        for note in report.notes:
            self.stdout.write(f"  note: {note}")
        self.stdout.write(f"{'participant':<26} {'study':<16} {'action':<10} {'amount':>10}  {'state':<15} note")
        for r in report.rows:
            amount = f"{r.amount:.2f} {r.currency}" if r.amount is not None else ""
            line = f"{r.participant:<26} {r.study:<16} {r.action:<10} {amount:>10}  {r.state:<15} {r.note}"
            self.stdout.write(line)
        counts = ", ".join(f"{n} {state}" for state, n in sorted(report.counts.items())) or "nobody"
        total = {
            "bonus": f"; bonuses {report.total:.2f}",
            "places": f"; expected cost {report.total:.2f} (the reward of the places added; Prolific's fee on top)",
        }.get(report.operation, "")
        self.stdout.write(f"{counts}{total}")

    def _subscribe(self, url: str | None, workspace: str | None, *, run: bool, as_json: bool) -> None:
        if not url:
            raise CommandError("subscribe needs --url https://<host>/hooks/prolific/.")
        workspace_id = workspace or settings.PROLIFIC_WORKSPACE_ID
        try:
            if run:
                steps = subscriptions.run(target_url=url, workspace_id=workspace_id)
            else:
                steps = subscriptions.plan(target_url=url, workspace_id=workspace_id)
        except (operations.ProlificDisabled, subscriptions.BadSubscription) as exc:
            raise CommandError(str(exc)) from None
        if as_json:
            self.stdout.write(_dumps({"dry_run": not run, "steps": [s.as_dict() for s in steps]}))
        else:
            head = "Dry run (nothing sent; add --run to do it)" if not run else "Run"
            self.stdout.write(f"{head}: subscribe {url} in workspace {workspace_id}")
            for s in steps:
                self.stdout.write(f"{s.what:<26} {s.state:<10} {s.note}")
        if any(s.state == operations.FAILED for s in steps):
            raise CommandError("Some steps failed: see above; run again to retry them.")

    def _poll(self, study: Study) -> None:
        try:
            result = polling.poll(study=study)
        except operations.ProlificDisabled as exc:
            raise CommandError(str(exc)) from None
        studies = ", ".join(result.prolific_studies) or "none (no Prolific worker at work)"
        self.stdout.write(f"Polled {study.slug}: Prolific studies {studies}; {result.submissions} submission(s)")
        for event in result.events:
            self.stdout.write(f"  {event.participant_id or '-'} {event.resource_id} {event.status}: {event.outcome}")
        self.stdout.write(f"{result.freed} slot(s) freed")
        if result.errors:
            raise CommandError("Polling failed: " + "; ".join(result.errors))

    def _message(self, study: Study, *, run: bool, **options: Any) -> None:
        if options["resolve"]:
            if options["sent"] is None:
                raise CommandError("--resolve KEY needs --sent yes or --sent no (what Prolific shows).")
            try:
                row = messages.resolve(key=options["resolve"], sent=options["sent"] == "yes", note=options["by"])
            except messages.MessageError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"message {row.key}: {row.status}")
            return
        if not options["kind"]:
            raise CommandError("message needs --kind one, bulk or broadcast.")
        what = {
            "study": study,
            "kind": options["kind"],
            "text": options["text"],
            "subject": options["subject"],
            "template": options["template"],
            "language": options["language"],
            "participant": options["to"],
            "again": options["again"],
        }
        try:
            by = options["by"]
            items = messages.send(**what, sent_by=by) if run else messages.plan(**what, actor=by)
        except (messages.MessageError, operations.ProlificDisabled) as exc:
            raise CommandError(f"{exc} Nothing was sent.") from None
        if options["json"]:
            self.stdout.write(_dumps({"dry_run": not run, "messages": [i.as_dict() for i in items]}))
        else:
            head = "Dry run (nothing sent; add --run to send)" if not run else "Run"
            self.stdout.write(f"{head}: {options['kind']} message for {study.slug}")
            for i in items:
                subject = f" subject {i.subject!r};" if i.kind == messages.Kind.BROADCAST else ""
                self.stdout.write(
                    f"Prolific study {i.prolific_study}: {len(i.recipients)} recipient(s);{subject} "
                    f"{i.state} {i.note}".rstrip()
                )
            if items:
                self.stdout.write(f"text: {items[0].body}")
        if any(i.state in (operations.FAILED, operations.UNCERTAIN) for i in items):
            raise CommandError("Some messages failed or are uncertain: see above.")


def _dumps(data: Any) -> str:
    return json.dumps(data, indent=2)
