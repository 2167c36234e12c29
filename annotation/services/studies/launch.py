"""The launch check: what blocks opening a study, and what deserves a look first. ONE list, computed here;
``manage.py check_study``, the study's dashboard page, its admin page and every rehearsal report show it.

Blockers: placeholders left in what workers read (the example consent's "[£X.XX]", "[researcher name,
email]"), no posted reward, a consent promising another pay than the study's (reward, currency, hourly rate),
task texts missing in the study's language, a condition a worker cannot finish in the time the consent states.
Deserving a look: attention checks without a fail limit (nobody is screened), no integrity rule, no ethics
reference, a consent or an instruction on AI tools that a browser-language study shows untranslated.

``open_study`` is how a person opens a study (the admin, the API, ``check_study --open``, the creation
commands' ``--open``): with a blocker it refuses unless told to override, and an override is recorded
(``LaunchOverride``: who, when, which blockers). ``open_study(pilot=True)`` launches it as a pilot (its pilot
share of each condition's slots; the same check, as it is the launch), ``open_rest`` opens the rest after it.
``studies.change_status`` stays the bare transition the machinery uses (a rehearsal's scratch copy, the tests'
fixtures).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.models import AttentionCheck, LaunchOverride, Study
from annotation.protocol.languages import shipped
from annotation.services.session import presentation
from annotation.services.state import slots
from annotation.services.studies import studies
from annotation.services.texts import languages, study_texts
from annotation.services.verdicts import integrity

# What a researcher fills in: text in square brackets (not a Markdown link), amounts written with X or Y, and
# the phrases the shipped example consents used before they bracketed them (copies of those are about).
_BRACKETED = re.compile(r"(?<!\])\[(?!\s*[xX ]?\s*\])([^\[\]\n]{1,80})\](?![(\[])")
_AMOUNT = re.compile(r"(?<![\w])[£€$¥]?\s?[XY]{1,3}[.,][XY]{2}(?:\s?[£€$])?(?![\w])")
_KNOWN = (
    "researcher name, email",
    "board, reference",
    "Name, E-Mail der Forschenden",
    "Kommission, Aktenzeichen",
    "研究人员姓名、电子邮箱",
    "审查委员会、批准编号",
)
# "about 20 minutes", "etwa 20 Minuten", "约需 20 分钟": the longest time a text promises.
_MINUTES = re.compile(r"(\d{1,3})\s*(?:\*\*)?\s*(?:minutes?|mins?|Minuten|分钟)", re.IGNORECASE)
# An amount of money a text states: "£1.50", "1,50 €", "1.50 USD", "USD 1.50", "¥10", "10 元" (placeholders such
# as "[£X.XX]" have no digits and are not amounts). Per hour when the words say so right after it ("per hour",
# "pro Stunde", "/h") or just before it ("每小时至少 ¥60").
_SYMBOLS = {"£": "GBP", "$": "USD", "€": "EUR", "¥": "CNY", "元": "CNY"}
_CODES = "USD|GBP|EUR|CNY|RMB|AUD|CAD|CHF|JPY"
_NUMBER = r"\d{1,6}(?:[.,]\d{1,2})?"
_AMOUNTS = re.compile(
    rf"(?P<sym>[£$€¥])\s?(?P<a>{_NUMBER})"
    rf"|(?P<code>{_CODES})\s?(?P<b>{_NUMBER})\b"
    rf"|(?<![\d.,])(?P<c>{_NUMBER})\s?(?:(?P<after_sym>[£€元])|(?P<after_code>{_CODES})\b)"
)
_HOURLY_AFTER = re.compile(
    r"^\W{0,3}\s*(?:per\s+hour|an\s+hour|a\s+hour|/\s?h(?:our|r)?\b|hourly|pro\s+Stunde|je\s+Stunde|/\s?Std|"
    r"每小时|/\s?小时)",
    re.IGNORECASE,
)
_HOURLY_BEFORE = re.compile(r"(?:每小时|每小時|per\s+hour|pro\s+Stunde)[^\d£$€¥]{0,8}$", re.IGNORECASE)


@dataclass(frozen=True)
class StatedAmount:
    amount: Decimal
    currency: str
    hourly: bool  # "at least £9.00 per hour"; otherwise the reward for the study
    text: str  # as written


def stated_amounts(text: str) -> list[StatedAmount]:
    """The amounts of money ``text`` states, each with its currency and whether it is per hour."""
    found = []
    for m in _AMOUNTS.finditer(text):
        number = m.group("a") or m.group("b") or m.group("c")
        symbol = m.group("sym") or m.group("after_sym")
        currency = _SYMBOLS[symbol] if symbol else (m.group("code") or m.group("after_code")).upper()
        try:
            amount = Decimal(number.replace(",", "."))
        except InvalidOperation:  # pragma: no cover - the pattern admits only numbers
            continue
        hourly = bool(_HOURLY_AFTER.search(text[m.end() : m.end() + 24].replace("*", ""))) or bool(
            _HOURLY_BEFORE.search(text[max(0, m.start() - 16) : m.start()].replace("*", ""))
        )
        found.append(StatedAmount(amount, "CNY" if currency == "RMB" else currency, hourly, m.group(0).strip()))
    return found


@dataclass(frozen=True)
class Finding:
    code: str  # placeholder, no_posted_reward, missing_texts, too_long, no_fail_limit, ...
    message: str  # what is wrong, for the researcher
    fix: str  # the command or the place that sets it right

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True)
class LaunchCheck:
    study: str
    blockers: list[Finding] = field(default_factory=list)
    looks: list[Finding] = field(default_factory=list)  # deserve a look; none blocks

    @property
    def ready(self) -> bool:
        return not self.blockers

    def as_dict(self) -> dict[str, Any]:
        return {
            "study": self.study,
            "ready": self.ready,
            "blockers": [f.as_dict() for f in self.blockers],
            "look": [f.as_dict() for f in self.looks],
        }

    def lines(self) -> list[str]:
        """The check as plain lines (the command, the rehearsal report), blockers first."""
        if not self.blockers and not self.looks:
            return ["Nothing blocks the launch, and nothing needs a look."]
        out = []
        if self.blockers:
            out.append(f"BLOCKS the launch ({len(self.blockers)}):")
            out += [f"- {f.message} Fix: {f.fix}" for f in self.blockers]
        else:
            out.append("Nothing blocks the launch.")
        if self.looks:
            out.append(f"Deserves a look ({len(self.looks)}):")
            out += [f"- {f.message} Fix: {f.fix}" for f in self.looks]
        return out


class LaunchBlocked(ValidationError):
    def __init__(self, check: LaunchCheck):
        self.check = check
        named = "; ".join(f.message for f in check.blockers)
        super().__init__(
            {
                "status": f"{check.study} has {len(check.blockers)} launch blocker(s): {named} "
                f"See manage.py check_study {check.study}; open anyway only with an override (it is recorded)."
            }
        )


def placeholders(text: str) -> list[str]:
    """The placeholders left in ``text``, in order, each once."""
    found = [m.group(0) for m in _BRACKETED.finditer(text)]
    rest = _BRACKETED.sub(" ", text)  # an amount or phrase inside brackets is named once, with them
    found += [m.group(0).strip() for m in _AMOUNT.finditer(rest)]
    found += [phrase for phrase in _KNOWN if phrase in rest]
    return list(dict.fromkeys(found))


def _worker_texts(study: Study) -> Iterable[tuple[str, str]]:
    """(where, text) for everything a worker of the study reads that the researcher wrote."""
    yield "the title", study.worker_title or ""
    yield "the description", study.worker_description or ""
    if study.consent_required:
        yield "the consent", study.consent_text or ""
    for question in study.survey or []:
        yield f"survey question {question.get('key')}", str(question.get("label", ""))
        for option in question.get("options") or []:
            yield f"survey question {question.get('key')}", str(option[-1] if isinstance(option, list) else option)
    for question in study.comprehension or []:
        yield f"comprehension question {question.get('key')}", str(question.get("label", ""))
    for language, own in sorted((study.translations or {}).items()):
        if not isinstance(own, dict):
            continue
        for name in ("worker_title", "worker_description", "consent_text"):
            if isinstance(own.get(name), str):
                yield f"the {language} {name.replace('_', ' ')}", own[name]
        for key, question in sorted((own.get("survey") or {}).items()):
            if isinstance(question, dict):
                texts = [question.get("label") or "", *(question.get("options") or [])]
                yield f"the {language} survey question {key}", " ".join(str(t) for t in texts)


def _consents(study: Study) -> Iterable[tuple[str, str]]:
    if not study.consent_required:
        return
    yield "the consent", study.consent_text or ""
    for language, own in sorted((study.translations or {}).items()):
        if isinstance(own, dict) and isinstance(own.get("consent_text"), str):
            yield f"the {language} consent", own["consent_text"]


def stated_minutes(study: Study) -> int | None:
    """The longest time the consent (in any of its languages) tells workers the study takes."""
    found = [int(m.group(1)) for _, text in _consents(study) for m in _MINUTES.finditer(text)]
    return max(found) if found else None


def _blockers(study: Study) -> list[Finding]:
    slug, found = study.slug, []
    where: dict[str, list[str]] = {}
    for place, text in _worker_texts(study):
        for placeholder in placeholders(text):
            where.setdefault(placeholder, [])
            if place not in where[placeholder]:
                where[placeholder].append(place)
    if where:
        listed = "; ".join(f"{p!r} in {', '.join(places)}" for p, places in where.items())
        found.append(
            Finding(
                "placeholder",
                f"Placeholders are left in what workers read: {listed}.",
                f"write the real values into the file and run manage.py configure_study {slug} --consent-file "
                "FILE (or --survey-file), or edit the study in the admin",
            )
        )
    if study.base_reward is None:
        found.append(
            Finding(
                "no_posted_reward",
                "No posted reward: the start page cannot state the pay and no bonus can be computed.",
                f"manage.py configure_study {slug} --posted-reward AMOUNT (the reward posted on the platform; "
                "0 if none was posted)",
            )
        )
    missing = languages.missing_task_texts(study)
    if missing:
        shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
        found.append(
            Finding(
                "missing_texts",
                f"The task lacks texts in the study's language ({study.language}): {shown}.",
                "add them in the admin (the task's page, Texts in …)",
            )
        )
    found += _pay_blockers(study)
    stated = stated_minutes(study)
    if stated is not None:
        for condition in study.conditions.select_related("study").order_by("shots"):
            n_train, n_test = presentation.item_counts(condition)
            needed = presentation.estimate(study, n_train + n_test)
            if needed.minutes > stated:
                found.append(
                    Finding(
                        "too_long",
                        f"The {condition.shots}-shot condition asks {n_train + n_test} items ({n_train} training, "
                        f"{n_test} test), about {needed.minutes} minutes at {needed.seconds_per_item:.0f} s an "
                        f"item; the consent says {stated} minutes.",
                        "state the real time in the consent (configure_study --consent-file), or ask fewer items",
                    )
                )
    return found


def _pay_blockers(study: Study) -> list[Finding]:
    """The pay a consent promises must be the study's: its currency, its posted reward (when one is set: its
    absence is a blocker of its own), and no hourly floor above the rate the bonus tops up to."""
    wrong = []
    for where, text in _consents(study):
        for stated in stated_amounts(text):
            if stated.currency != study.currency:
                wrong.append(f"{stated.text!r} in {where} is in {stated.currency}, the study pays in {study.currency}")
            elif stated.hourly and stated.amount > study.hourly_rate:
                wrong.append(
                    f"{stated.text!r} per hour in {where} is more than the study's hourly rate "
                    f"({study.hourly_rate} {study.currency})"
                )
            elif not stated.hourly and study.base_reward is not None and stated.amount != study.base_reward:
                wrong.append(
                    f"{stated.text!r} in {where} is not the posted reward ({study.base_reward} {study.currency})"
                )
    if not wrong:
        return []
    return [
        Finding(
            "consent_pay",
            f"The consent promises another pay than the study's: {'; '.join(dict.fromkeys(wrong))}.",
            f"state the posted reward and the hourly rate in the consent (configure_study {study.slug} "
            "--consent-file FILE), or correct the study's posted reward (--posted-reward), hourly rate or "
            "currency (the admin)",
        )
    ]


def _looks(study: Study) -> list[Finding]:
    slug, found = study.slug, []
    checks = AttentionCheck.objects.filter(study=study).count()
    if checks and not study.attention_fail_limit:
        found.append(
            Finding(
                "no_fail_limit",
                f"{checks} attention check(s) but no fail limit: failures are only reported, nobody is screened.",
                f"manage.py attention_checks {slug} --fail-limit N [--action exclude]",
            )
        )
    if not integrity.has_rule(study):
        found.append(
            Finding(
                "no_integrity_rule",
                "No integrity rule: copying, fast answers and time away are recorded but flag nobody.",
                f"manage.py configure_study {slug} --integrity-max-fast-share 0.5 (and/or --integrity-max-copies "
                "N, --integrity-max-hidden-share S)",
            )
        )
    if study.ethics_review != Study.EthicsReview.EXEMPT and not study.ethics_reference.strip():
        found.append(
            Finding(
                "no_ethics_reference",
                "No ethics reference: the statement cannot name the approval.",
                f"manage.py configure_study {slug} --ethics-review approved --ethics-board NAME "
                "--ethics-reference REF (or --ethics-review exempt)",
            )
        )
    if study.language not in shipped() and study.consent_required and (study.consent_text or "").strip():
        translated = {lang for lang, own in (study.translations or {}).items() if (own or {}).get("consent_text")}
        others = [lang for lang in shipped() if lang != "en" and lang not in translated]
        if others:
            found.append(
                Finding(
                    "consent_untranslated",
                    "The study follows the browser's language, but its consent has no text in "
                    f"{', '.join(others)}: those browsers get their own pages around this consent.",
                    "add the consent in those languages (the admin: Translations), or fix the study's language "
                    "(create_clues_studies --language)",
                )
            )
    if (study.ai_instruction or "").strip():
        have = study_texts.ai_instruction_languages(study)
        shown = [study.language] if study.language in shipped() else shipped()
        lacking = [code for code in shown if code not in have]
        if lacking:
            found.append(
                Finding(
                    "ai_instruction_untranslated",
                    f"The instruction on AI tools has no text in {', '.join(lacking)}: workers reading those pages "
                    "would get it in another language.",
                    "add it in those languages (the admin: Translations, ai_instruction), or "
                    f"manage.py configure_study {slug} --ai-instruction-standard",
                )
            )
    if study.in_pilot:
        found.append(_pilot_look(study))
    return found


def _pilot_look(study: Study) -> Finding:
    counts = slots.condition_counts([study])[study.pk]
    done = sum(min(c.completed, c.slots) for c in counts)
    share = sum(c.slots for c in counts)
    return Finding(
        "pilot_running",
        f"The study runs as a pilot: {study.pilot_workers_per_condition} of {study.workers_per_condition} workers "
        f"per condition, {done} of its {share} workers completed. Look at their results and the planning figures "
        "(the dashboard's study page) before the rest.",
        f"manage.py check_study {study.slug} --open-rest (opens the remaining slots; Prolific's places follow)",
    )


def launch_check(study: Study) -> LaunchCheck:
    """What blocks opening ``study`` and what deserves a look before it: the one list every surface shows."""
    return LaunchCheck(study=study.slug, blockers=_blockers(study), looks=_looks(study))


def open_study(
    *,
    study: Study,
    override: bool = False,
    by: User | AnonymousUser | None = None,
    by_name: str = "",
    pilot: bool = False,
) -> Study:
    """Open ``study`` as a person asks to. Its launch (draft → open) is refused (LaunchBlocked) while the
    launch check names a blocker, unless ``override``; then the override is recorded with who asked (``by``,
    or ``by_name`` for a command) and the blockers as they were. Reopening a paused study is no launch.
    ``pilot``: the launch is a pilot's (``studies.change_status`` says when it may be)."""
    launching = study.status == Study.Status.DRAFT
    check = launch_check(study) if launching else LaunchCheck(study=study.slug)
    if check.blockers and not override:
        raise LaunchBlocked(check)
    with transaction.atomic():
        overridden = {"overridden_blockers": [f.as_dict() for f in check.blockers]} if check.blockers else None
        actor = by if by is not None and by.pk else by_name or None
        opened = studies.change_status(
            study=study, to_status=Study.Status.OPEN, pilot=pilot, actor=actor, detail=overridden
        )
        if check.blockers:
            user = by if by is not None and by.pk else None
            LaunchOverride.objects.create(
                study=opened,
                by=user,
                by_name=by_name or (user.get_username() if user is not None else ""),
                blockers=[f.as_dict() for f in check.blockers],
            )
    return opened


def open_rest(*, study: Study) -> Study:
    """Open the rest of a pilot's slots as a person asks to (the pilot was the launch: no check again)."""
    # audit: open_rest before=status,rest_opened_at,open slots per condition after=status,rest_opened_at,N
    return studies.change_status(study=study, to_status=Study.Status.OPEN, rest=True)
