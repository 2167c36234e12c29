"""Set what a study's workers see and answer: consent, survey, comprehension check, outcome codes, title.

manage.py configure_study sst2-split1 --consent-file consent.md
manage.py configure_study sst2-split1 --survey-file survey.json --survey-placement before_training
manage.py configure_study sst2-split1 --comprehension-file check.json   # '[]' for none
manage.py configure_study sst2-split1 --code declined=NOCONSENT --code completed=C0DE1234
manage.py configure_study sst2-split1 --posted-reward 1.50      # the reward posted on the platform
manage.py configure_study sst2-split1 --title "Movie review sentiment" --no-consent
manage.py configure_study sst2-split1 --data-licence "CC BY 4.0"   # for the data release (release_study)
manage.py configure_study sst2-split1 --integrity-max-fast-share 0.5 --integrity-action review   # the integrity rule
manage.py configure_study sst2-split1 --ethics-review approved --ethics-board "Univ. board" --ethics-reference 2026-17
manage.py configure_study sst2-split1 --preregistration https://osf.io/abcd1   # where the design was registered
manage.py configure_study sst2-split1 --ai-instruction-standard   # "do not use AI tools", in every worker language
manage.py configure_study sst2-split1 --ai-instruction "Do not use ChatGPT."   # your own (translations: the admin)
manage.py configure_study sst2-split1 --pilot-workers-per-condition 1   # the pilot's share (check_study --pilot)
manage.py configure_study sst2-split1 --show          # print the settings and the outcome codes as JSON

Every change goes through annotation.services.studies.studies.study_update, so a
malformed survey, comprehension check or code is refused with the reason and nothing is saved.
"""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import CommandError, CommandParser

from annotation.models import Study
from annotation.protocol import ai_tools
from annotation.services.state.outcomes import Outcome
from annotation.services.studies import studies
from tasks_app.management.base import ProjectCommand

SHOWN = (
    "worker_title",
    "worker_description",
    "consent_required",
    "consent_text",
    "survey",
    "survey_placement",
    "comprehension",
    "outcome_codes",
    "data_licence",
    "checklist_answers",
    "attention_fail_limit",
    "attention_action",
    "integrity_max_copies",
    "integrity_max_fast_share",
    "integrity_max_hidden_share",
    "integrity_hidden_seconds",
    "integrity_action",
    "ethics_review",
    "ethics_board",
    "ethics_reference",
    "preregistration",
    "ai_instruction",
    "pilot_workers_per_condition",
)


class Command(ProjectCommand):
    help = (
        "Set a study's consent text, survey, comprehension check, outcome codes, posted reward and title "
        "(or --show them)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("study", help="The study's slug.")
        parser.add_argument("--consent-file", help="Require consent with this text (Markdown or plain text).")
        parser.add_argument("--no-consent", action="store_true", help="Ask for no consent.")
        parser.add_argument("--survey-file", help="A JSON list of survey questions ('[]' for none).")
        parser.add_argument("--survey-placement", choices=Study.SurveyPlacement.values)
        parser.add_argument(
            "--comprehension-file", help="A JSON list of comprehension-check questions ('[]' for none)."
        )
        parser.add_argument(
            "--code",
            action="append",
            default=[],
            metavar="OUTCOME=CODE[,URL]",
            help=f"An outcome's code and optional Prolific URL; outcomes: {', '.join(o.value for o in Outcome)}.",
        )
        parser.add_argument(
            "--posted-reward",
            help="The reward posted on the platform per participant (the bonus tops it up to the hourly rate; "
            "0 only if none was posted).",
        )
        parser.add_argument(
            "--data-licence", help="The licence of the human data release (release_study), e.g. 'CC BY 4.0'."
        )
        parser.add_argument(
            "--checklist-file",
            help="A JSON object of the human-baselines checklist items only the authors can answer, "
            'e.g. {"0.1": "Our paper", "2.4": "No"}.',
        )
        parser.add_argument(
            "--integrity-max-copies", metavar="N", help="Integrity rule: most test items copied from ('' : no limit)."
        )
        parser.add_argument(
            "--integrity-max-fast-share",
            metavar="S",
            help="Integrity rule: largest share (0..1) of test items answered faster than read ('': no limit).",
        )
        parser.add_argument(
            "--integrity-max-hidden-share",
            metavar="S",
            help="Integrity rule: largest share (0..1) of test items with the page away too long ('': no limit).",
        )
        parser.add_argument(
            "--integrity-hidden-seconds", type=int, metavar="S", help="Integrity rule: what counts as long away."
        )
        parser.add_argument(
            "--integrity-action", choices=Study.AttentionAction.values, help="What the integrity rule does."
        )
        parser.add_argument("--ethics-review", choices=[*Study.EthicsReview.values, ""], help="approved or exempt.")
        parser.add_argument("--ethics-board", help="The board that approved the study or granted the exemption.")
        parser.add_argument("--ethics-reference", help="The approval's reference number.")
        parser.add_argument(
            "--preregistration",
            help="Where the design was publicly pre-registered (a URL or a registry's reference; '' for none).",
        )
        ai = parser.add_mutually_exclusive_group()
        ai.add_argument(
            "--ai-instruction",
            help="What workers are told about AI tools, shown with the instructions ('' for nothing); its "
            "translations are set in the admin (Translations, ai_instruction).",
        )
        ai.add_argument(
            "--ai-instruction-standard",
            action="store_true",
            help="Tell workers not to use AI assistants, translation tools or search engines, in every language "
            "the worker pages ship (annotation.protocol.ai_tools).",
        )
        parser.add_argument(
            "--pilot-workers-per-condition",
            metavar="P",
            help="The pilot's share: workers per condition while the study runs as a pilot "
            "(check_study --open --pilot), at most its workers per condition ('': no pilot).",
        )
        parser.add_argument("--title", help="The neutral title workers see.")
        parser.add_argument("--description", help="The description workers see.")
        parser.add_argument("--show", action="store_true", help="Print the settings after any change.")

    def handle(self, *args: Any, study: str, **options: Any) -> None:
        found = Study.objects.filter(slug=study).first()
        if found is None:
            raise CommandError(f"No study with slug {study!r}.")
        changes = self._changes(found, options)
        if changes:
            try:
                found = studies.study_update(study=found, actor="manage.py configure_study", **changes)
            except ValidationError as exc:
                messages = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
                raise CommandError(
                    "; ".join(f"{k}: {' '.join(v)}" if k else " ".join(v) for k, v in messages.items())
                ) from None
            self.stderr.write(f"Updated {found.slug}: {', '.join(sorted(changes))}")
        if options["show"] or not changes:
            self.stdout.write(json.dumps({f: getattr(found, f) for f in SHOWN}, ensure_ascii=False, indent=2))

    def _changes(self, study: Study, options: dict[str, Any]) -> dict[str, Any]:
        changes: dict[str, Any] = {}
        if options["consent_file"] and options["no_consent"]:
            raise CommandError("Give --consent-file or --no-consent, not both.")
        if options["consent_file"]:
            changes.update(consent_required=True, consent_text=_read(options["consent_file"]))
        if options["no_consent"]:
            changes["consent_required"] = False
        if options["survey_file"]:
            try:
                changes["survey"] = json.loads(_read(options["survey_file"]))
            except json.JSONDecodeError as exc:
                raise CommandError(f"{options['survey_file']} is not valid JSON: {exc}") from None
        if options["survey_placement"]:
            changes["survey_placement"] = options["survey_placement"]
        if options["comprehension_file"]:
            try:
                changes["comprehension"] = json.loads(_read(options["comprehension_file"]))
            except json.JSONDecodeError as exc:
                raise CommandError(f"{options['comprehension_file']} is not valid JSON: {exc}") from None
        if options["code"]:
            codes = {k: dict(v) for k, v in (study.outcome_codes or {}).items() if isinstance(v, dict)}
            for item in options["code"]:
                outcome, sep, value = item.partition("=")
                if not sep or not value:
                    raise CommandError(f"--code takes OUTCOME=CODE[,URL]; got {item!r}.")
                code, _, url = value.partition(",")
                codes[outcome.strip()] = {"code": code.strip(), "url": url.strip()}
            changes["outcome_codes"] = codes
        if options["posted_reward"] is not None:
            try:
                changes["base_reward"] = Decimal(options["posted_reward"])
            except InvalidOperation:
                raise CommandError(
                    f"--posted-reward takes an amount, e.g. 1.50; got {options['posted_reward']!r}."
                ) from None
        if options["data_licence"] is not None:
            changes["data_licence"] = options["data_licence"]
        if options["checklist_file"]:
            try:
                changes["checklist_answers"] = json.loads(_read(options["checklist_file"]))
            except json.JSONDecodeError as exc:
                raise CommandError(f"{options['checklist_file']} is not valid JSON: {exc}") from None
        for name, kind in (
            ("integrity_max_copies", int),
            ("integrity_max_fast_share", float),
            ("integrity_max_hidden_share", float),
        ):
            raw = options[name]
            if raw is not None:
                try:
                    changes[name] = kind(raw) if raw.strip() else None
                except ValueError:
                    flag = "--" + name.replace("_", "-")
                    raise CommandError(f"{flag} takes a number, or '' for no limit; got {raw!r}.") from None
        for name in (
            "integrity_hidden_seconds",
            "integrity_action",
            "ethics_review",
            "ethics_board",
            "ethics_reference",
        ):
            if options[name] is not None:
                changes[name] = options[name]
        if options["preregistration"] is not None:
            changes["preregistration"] = options["preregistration"].strip()
        if options["ai_instruction"] is not None:
            changes["ai_instruction"] = options["ai_instruction"].strip()
        if options["ai_instruction_standard"]:
            changes.update(_standard_ai_instruction(study))
        raw = options["pilot_workers_per_condition"]
        if raw is not None:
            try:
                changes["pilot_workers_per_condition"] = int(raw) if raw.strip() else None
            except ValueError:
                raise CommandError(f"--pilot-workers-per-condition takes a whole number, or ''; got {raw!r}.") from None
        if options["title"] is not None:
            changes["worker_title"] = options["title"]
        if options["description"] is not None:
            changes["worker_description"] = options["description"]
        return changes


def _standard_ai_instruction(study: Study) -> dict[str, Any]:
    """The shipped instruction as the study's own text (in the study's language, else the default one) and as
    a translation in each other shipped language, the study's other translations kept."""
    own = study.language or ai_tools.DEFAULT_LANGUAGE
    translations = {code: dict(texts) for code, texts in (study.translations or {}).items() if isinstance(texts, dict)}
    for code, text in ai_tools.STANDARD.items():
        if code != own:
            translations.setdefault(code, {})["ai_instruction"] = text
    return {"ai_instruction": ai_tools.STANDARD[own], "translations": translations}


def _read(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"Cannot read {path}: {exc.strerror}") from None
