"""Mutation testing of the rules that decide money, slots and verdicts: mutmut (pinned in requirements-dev.txt)
over one area at a time, running only that area's tests. scripts/mutation.sh is the way in (it sets the
environment and runs each area in a process of its own); docs/development.md#mutation-testing has the figures.

    python scripts/mutation.py AREA run        # mutants/ afresh, every mutant tried, the report written
    python scripts/mutation.py AREA report     # the report of the last run (mutants/ still there)
    python scripts/mutation.py AREA show NAME  # one mutant's diff
    python scripts/mutation.py --list          # the areas, one a line: area, modules, tests

mutmut reads its configuration from pyproject.toml only, and one configuration covers a run: the shared part
is [tool.mutmut] there; the area's modules (only_mutate) and tests (the test selection) are set here, on the
configuration mutmut has just read, before its command runs. mutants/ holds one area at a time.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Area:
    modules: tuple[str, ...]  # the files mutated
    tests: tuple[str, ...]  # the tests run against each mutant (mutmut runs, of these, the ones that reach it)


# The area map: what each area mutates, and which tests judge it. tests/test_release_checks.py checks that
# every path here exists.
AREAS: dict[str, Area] = {
    "pay": Area(
        ("annotation/services/money/pay.py",),
        (
            "tests/reporting/test_pay_rule.py",
            "tests/studies/test_closing.py",
            "tests/reporting/test_pay_after_completion.py",
            "tests/reporting/test_pay_and_predictions.py",
            "tests/prolific/test_pay_base.py",
            "tests/mutation/test_pay_mutants.py",
        ),
    ),
    "majority": Area(
        ("annotation/reporting/majority.py", "annotation/reporting/agreement.py"),
        (
            "tests/reporting/test_majority_ties.py",
            "tests/reporting/test_fewclue_table.py",
            "tests/reporting/test_statistics.py",
            "tests/mutation/test_alpha_mutants.py",
            "tests/mutation/test_majority_mutants.py",
        ),
    ),
    "training": Area(
        (
            "annotation/services/verdicts/training_filter.py",
            "annotation/services/verdicts/training_s1.py",
            "annotation/services/verdicts/filter_groups.py",
        ),
        (
            "tests/studies/test_training_filter.py",
            "tests/studies/test_filter_groups.py",
            "tests/mutation/test_training_mutants.py",
        ),
    ),
    "attention": Area(
        ("annotation/services/verdicts/attention/rule.py",),
        (
            "tests/worker/test_attention_checks.py",
            "tests/worker/test_step_end.py",
            "tests/mutation/test_attention_mutants.py",
        ),
    ),
    "integrity": Area(
        ("annotation/services/verdicts/integrity.py",),
        (
            "tests/worker/test_integrity.py",
            "tests/worker/test_integrity_limits.py",
            "tests/mutation/test_integrity_mutants.py",
        ),
    ),
    "slots": Area(
        ("annotation/services/state/slots.py",),
        (
            "tests/studies/test_slots.py",
            "tests/studies/test_abandonment.py",
            "tests/mutation/test_slots_mutants.py",
        ),
    ),
    "webhooks": Area(
        ("annotation/services/prolific/webhooks.py",),
        (
            "tests/prolific/test_webhooks.py",
            "tests/mutation/test_webhooks_mutants.py",
            "tests/mutation/test_webhooks_race_mutants.py",
        ),
    ),
    "places": Area(
        ("annotation/services/prolific/places.py",),
        (
            "tests/prolific/test_places.py",
            "tests/prolific/test_places_status.py",
            "tests/mutation/test_places_mutants.py",
        ),
    ),
    "bonus": Area(
        ("annotation/services/prolific/bonus.py",),
        (
            "tests/prolific/test_pay_base.py",
            "tests/prolific/test_bonus_race.py",
            "tests/prolific/test_operations.py",
            "tests/prolific/test_lost_replies.py",
            "tests/mutation/test_bonus_mutants.py",
        ),
    ),
    "review": Area(
        ("annotation/services/prolific/review.py",),
        (
            "tests/prolific/test_operations.py",
            "tests/prolific/test_entry_points.py",
            "tests/prolific/test_lost_replies.py",
            "tests/mutation/test_review_mutants.py",
        ),
    ),
}

# Mutant statuses, as mutmut names them, that count as killed (the rest are survivors to look at).
KILLED = {"killed", "caught by type check", "timeout", "segfault"}

# Survivors argued equivalent (no test can tell them from the code), each with why; docs/development.md lists
# them too. mutmut numbers a function's mutants in order, so an edit of that function renumbers them: a run
# after one says which survive now, and this list is redone from its diffs.
_PAY, _AGREEMENT, _MAJORITY, _SLOTS, _BONUS, _HOOKS = (
    "annotation.services.money.pay.",
    "annotation.reporting.agreement.",
    "annotation.reporting.majority.",
    "annotation.services.state.slots.",
    "annotation.services.prolific.bonus.",
    "annotation.services.prolific.webhooks.",
)
_SQLITE_LOCK = (
    "select_for_update's of= changed: SQLite, the run's database, takes no row locks; on PostgreSQL of=None "
    "locks the worker row too (same result) and an unknown name raises FieldError in the webhook tests there"
)
_DEFERRED = "a field left out of .only() is loaded when read: the same figures, one query more"
_INTEGRITY, _GROUPS = "annotation.services.verdicts.integrity.", "annotation.services.verdicts.filter_groups."
_REVIEW, _PLACES = "annotation.services.prolific.review.", "annotation.services.prolific.places."
_ONE_ARROW = "the study row's action 'PLACES {total}→{target}' has one arrow, so every split gives the same target"
_SYNC_REPORT = (
    "a field of the sync's own Report changed: the sync reads only its rows, notes and counts, and places_rows "
    "and run_places read none of operation, study, dry_run"
)
_OVERWRITTEN = "a row to send begun with another state or note: both branches after set its state and its note"
_NARROWING = (
    "the filter only narrows which conditions decide() is asked about, and decide() of one with nobody "
    "pending returns []"
)
_ZIP = "zip without strict: the decisions are made one per waiting worker, so the lengths are equal"
EQUIVALENT: dict[str, str] = {
    _PAY + "x__records__mutmut_26": "order_by('at') alone: SQLite returns events of the same instant in "
    "insertion order anyway ('id' is there for PostgreSQL)",
    _PAY + "x__records__mutmut_42": "the answers' filter without participation__in: the last answers are "
    "grouped per participation and read by its own id",
    _PAY + "x__records__mutmut_43": "without submitted_at__isnull=False: Max() skips NULLs, and a None "
    "last answer is the absent one",
    _PAY + "x__records__mutmut_64": "the surveys' filter without participation__in: as _42, grouped per "
    "participation and read by its own id",
    _PAY + "x_paid_time__mutmut_1": "exclusion_kind 'XXXX' by default: it is only tested for membership in "
    "NOT_THE_WORKERS_ACT, which neither '' nor 'XXXX' is",
    _PAY + "x_work_end__mutmut_1": "as x_paid_time__mutmut_1",
    _PAY + "x_work_end__mutmut_4": "completed = ended = None instead of False: only ever read as truth values",
    _PAY + "x_work_end__mutmut_6": "excluded_at '' at first: read only for a participation excluded now, whose "
    "exclusion event (lifecycle.transition records every change) sets it before it is read",
    _PAY + "x_work_end__mutmut_26": "excluded_at '' after an act: as _6, the exclusion that left the "
    "participation excluded comes after every act and sets it again",
    _AGREEMENT + "x_strict_majority__mutmut_3": "most_common(None)[0] is most_common(1)[0]",
    _AGREEMENT + "x_strict_majority__mutmut_5": "most_common(2)[0] is most_common(1)[0]",
    _AGREEMENT + "x_item_coincidences__mutmut_47": "np.add.reduceat without axis=0: its axis is 0 by default",
    _AGREEMENT + "x_spans_of_strings__mutmut_8": "-2 instead of -1 for an empty string: both are below 0",
    _AGREEMENT + "x_alpha_of_coincidences__mutmut_13": "np.eye(shape[2]) for np.eye(shape[1]): a coincidence "
    "matrix is square (values × values)",
    _MAJORITY + "x_condition_majority__mutmut_9": _DEFERRED,
    _MAJORITY + "x_condition_majority__mutmut_10": _DEFERRED,
    _MAJORITY + "x_condition_majority__mutmut_11": _DEFERRED,
    _MAJORITY + "x_condition_majority__mutmut_12": _DEFERRED,
    _MAJORITY + "x_condition_majority__mutmut_13": _DEFERRED,
    _MAJORITY + "x_condition_majority__mutmut_14": "select_related(None): the example is loaded when read",
    _MAJORITY + "x_condition_majority__mutmut_23": "without attention_check__isnull=True: Response.objects "
    "leaves attention checks out already",
    _SLOTS + "x__slot_holders__mutmut_4": "without is_preview=False: a preview has no slot number (a database "
    "constraint), and the holders' numbers skip None",
    _SLOTS + "x_condition_counts__mutmut_35": "order_by('shots') alone: the rows are grouped per study after",
    _SLOTS + "x_condition_counts__mutmut_36": "order_by('study_id') alone: SQLite groups by the (study, shots) "
    "unique index, so the shots come in order anyway ('shots' is there for PostgreSQL)",
    _BONUS + "x_bonus_rows__mutmut_5": "select_related without 'worker': the worker is loaded when read",
    _BONUS + "x_bonus_rows__mutmut_6": "select_related without 'study': the study is loaded when read",
    _BONUS + "x_bonus_rows__mutmut_48": "a row begun with state None: every branch after sets its state",
    _HOOKS + "x__study_of_submission__mutmut_27": "owner 'XXXX' for '' when Prolific names nobody: a participant "
    "id (24 hex digits) is never 'XXXX', so neither matches",
    _HOOKS + "x__prolific_study_of__mutmut_31": "'XXXX' for '' when the study cannot be told: it is compared "
    "with the study Prolific named (24 hex digits), never 'XXXX'",
    _HOOKS + "x__participation_for__mutmut_3": _SQLITE_LOCK,
    _HOOKS + "x__participation_for__mutmut_4": _SQLITE_LOCK,
    _HOOKS + "x__participation_for__mutmut_5": _SQLITE_LOCK,
    _HOOKS + "x__apply_submission_status__mutmut_21": "exclude(pk=None): the event itself is not newer than "
    "itself (sent_at__gt) and is not an approval where that is asked (status != APPROVED)",
    _HOOKS + "x__apply_submission_status__mutmut_25": "without event_type=SUBMISSION_EVENT: a study event's "
    "resource_id is a study's id, and Prolific's ids never repeat across studies and submissions",
    _HOOKS + "x__apply_submission_status__mutmut_52": "at=None: lifecycle.transition takes timezone.now() then",
    _HOOKS + "x__apply_submission_status__mutmut_55": "no at: as x__apply_submission_status__mutmut_52",
    _HOOKS + "x__apply_submission_status__mutmut_56": "the 'moved on' message: abandon() refuses only a "
    "participation no longer active, and this one was just read active under its row lock",
    _HOOKS + "x__apply_submission_status__mutmut_57": "as x__apply_submission_status__mutmut_56",
    _HOOKS + "x_record_and_apply__mutmut_82": "save(update_fields=None): every field of the row made just "
    "before in the same transaction is saved with the same values",
    _INTEGRITY + "x_figures__mutmut_82": "without reading_ms__isnull=False: NULL > x is never true in SQL, so an "
    "item without an estimate is not fast either way",
    _INTEGRITY + "x_judge__mutmut_71": "reason[:301]: a reason is at most about 250 characters (three breaches, "
    "shares of 0..1 printed as at most '100%'), so the cut never acts",
    _INTEGRITY + "x_report__mutmut_8": "order_by without 'id': (shots, slot) is unique among Participation.objects "
    "(one condition per shots, unique slot numbers; the previews without one are left out)",
    _INTEGRITY + "x_report__mutmut_65": "the default pair's reason half changed where only its decision half "
    "([0]) is read",
    _INTEGRITY + "x_report__mutmut_71": "the default pair's decision half changed where only its reason half "
    "([1]) is read",
    _GROUPS + "x__pending__mutmut_5": "a pending decision or any decision: undecided() then leaves out every "
    "worker with a final one, and a decision is pending or final",
    _GROUPS + "x__verdict__mutmut_60": "rule_version left out: the field's default is the same RULE_VERSION",
    _GROUPS + "x_decide__mutmut_7": "select_related(None): the study is loaded when read",
    _GROUPS + "x_decide__mutmut_27": "values_list(flat=True) with no field names gives the first field, the pk",
    _GROUPS + "x_decide__mutmut_48": _ZIP,
    _GROUPS + "x_decide__mutmut_51": _ZIP,
    _GROUPS + "x_decide__mutmut_52": _ZIP,
    _GROUPS + "x_decide_due__mutmut_10": _NARROWING,
    _GROUPS + "x_decide_due__mutmut_11": _NARROWING,
    _GROUPS + "x_decide_due__mutmut_21": "select_related(None): the study is loaded when read",
    _GROUPS + "x_is_ready__mutmut_24": "the oldest of the waiting workers' decisions without pending_group=True: "
    "a waiting worker has no final decision, so all theirs are pending",
    _REVIEW + "x_review_rows__mutmut_5": "select_related without 'worker': the worker is loaded when read",
    _REVIEW + "x_review_rows__mutmut_6": "select_related without 'study': the study is loaded when read",
    _REVIEW + "x_review_rows__mutmut_46": _OVERWRITTEN,
    _REVIEW + "x_review_rows__mutmut_47": _OVERWRITTEN,
    _REVIEW + "x_review_rows__mutmut_50": _OVERWRITTEN,
    _REVIEW + "x_review_rows__mutmut_51": _OVERWRITTEN,
    _REVIEW + "x_review_rows__mutmut_59": "state_of(kind=None): it reads kind only for an uncertain action, and a "
    "review action is only ever failed or done (review.py's claims and finishes)",
    _REVIEW + "x_run_review__mutmut_13": "_bulk_approve(log=None): _bulk_approve does not use its log (the bulk "
    "call is logged by the client, under no action)",
    _PLACES + "x__needing_a_place__mutmut_6": "select_related without 'worker': the worker is loaded when read",
    _PLACES + "x__needing_a_place__mutmut_7": "select_related without 'study': the study is loaded when read",
    _PLACES + "x__needing_a_place__mutmut_13": "without is_preview=False: a preview's worker is always the "
    "preview platform's (studies.preview), and prolific_participations keeps Prolific workers only",
    _PLACES + "x__needing_a_place__mutmut_27": "without event_type=SUBMISSION_EVENT: only a submission event is ever "
    "tied to a participation (webhooks._apply_submission_status, the one place that sets it)",
    _PLACES + "x__needing_a_place__mutmut_26": "the statuses heard without participation__in: they are read by each "
    "exclusion's own id, so another participation's are never read",
    _PLACES
    + "x__needing_a_place__mutmut_35": "order_by('sent_at') alone: SQLite returns events of the same instant in "
    "insertion order anyway ('pk' is there for PostgreSQL)",
    _PLACES + "x_places_rows__mutmut_4": "select_related without 'worker': the worker is loaded when read",
    _PLACES + "x_places_rows__mutmut_5": "select_related without 'study': the study is loaded when read",
    _PLACES + "x_places_rows__mutmut_49": "state_of(kind=None): it reads kind only to tell an uncertain bonus, and "
    "neither PLACES nor None is BONUS",
    _PLACES + "x_run_places__mutmut_21": "'XXXX' for the Prolific study when the report has no rows: then there is "
    "no exclusion to record",
    _PLACES + "x_run_places__mutmut_30": _ONE_ARROW,
    _PLACES + "x_run_places__mutmut_31": _ONE_ARROW,
    _PLACES + "x_run_places__mutmut_33": _ONE_ARROW,
    _PLACES + "x_run_places__mutmut_36": "_grow(log=None): _grow does not use its log (the client logs each call)",
    _PLACES + "x_sync__mutmut_7": "select_related(None): the task is loaded when read",
    _PLACES + "x_sync__mutmut_16": _SYNC_REPORT,
    _PLACES + "x_sync__mutmut_17": _SYNC_REPORT,
    _PLACES + "x_sync__mutmut_18": _SYNC_REPORT,
    _PLACES + "x_sync__mutmut_22": _SYNC_REPORT,
    _PLACES + "x_sync__mutmut_23": _SYNC_REPORT,
    _PLACES + "x_sync__mutmut_24": _SYNC_REPORT,
    _PLACES
    + "x_sync__mutmut_31": "run_places(log=None): run_places hands its log only to _grow, which does not use it",
    _PLACES + "x_sync__mutmut_32": "run_places(study=None): run_places does not read its study",
}


def _configure(area: Area) -> None:
    from mutmut import configuration

    cfg = configuration.config()  # [tool.mutmut] of pyproject.toml
    cfg.only_mutate = list(area.modules)
    cfg.pytest_add_cli_args_test_selection = list(area.tests)


def _results(area: Area) -> dict[str, str]:
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    statuses: dict[str, str] = {}
    for module in area.modules:
        data = SourceFileMutationData(path=Path(module))
        data.load()
        for name, code in sorted(data.exit_code_by_key.items()):
            statuses[name] = status_by_exit_code[code]
    return statuses


def _module_of(name: str, area: Area) -> str:
    for module in area.modules:
        if name.startswith(module.removesuffix(".py").replace("/", ".") + "."):
            return module
    raise KeyError(name)


def report(name: str, area: Area, seconds: float | None) -> int:
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    statuses = _results(area)
    killed = sum(1 for s in statuses.values() if s in KILLED)
    survivors = [m for m, s in statuses.items() if s not in KILLED]
    equivalent = [m for m in survivors if m in EQUIVALENT]
    rate = 100.0 * killed / len(statuses) if statuses else 0.0
    took = f", {seconds / 60:.1f} min" if seconds is not None else ""
    print(
        f"== mutation {name}: {len(statuses)} mutants, {killed} killed ({rate:.1f}%), "
        f"{len(equivalent)} equivalent, {len(survivors) - len(equivalent)} other survivors{took}"
    )
    for mutant in survivors:
        why = f" (equivalent: {EQUIVALENT[mutant]})" if mutant in equivalent else ""
        print(f"-- {statuses[mutant]}: {mutant}{why}")
        if not why:
            print(get_diff_for_mutant(mutant, path=Path(_module_of(mutant, area))))
    out = Path(os.environ.get("MUTATION_DIR", REPO / "test-artifacts" / "mutation"))
    out.mkdir(parents=True, exist_ok=True)
    summary = {"area": name, "mutants": len(statuses), "killed": killed, "equivalent": equivalent}
    summary["survivors"] = survivors
    if seconds is not None:
        summary["seconds"] = round(seconds)
    (out / f"{name}.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0 if len(survivors) == len(equivalent) else 1


def main(argv: list[str]) -> int:
    if argv == ["--list"]:
        for name, area in AREAS.items():
            print(name, " ".join(area.modules), " ".join(area.tests), sep="\t")
        return 0
    if len(argv) < 2 or argv[0] not in AREAS or argv[1] not in ("run", "report", "show"):
        print(f"usage: mutation.py AREA run|report|show NAME (areas: {', '.join(AREAS)})", file=sys.stderr)
        return 2
    name, command, rest = argv[0], argv[1], argv[2:]
    area = AREAS[name]
    os.chdir(REPO)  # mutmut works in the current directory: mutants/ is made there
    _configure(area)
    if command == "show":
        from mutmut.__main__ import cli

        cli(["show", *rest])
        return 0
    if command == "report":
        return report(name, area, None)
    shutil.rmtree("mutants", ignore_errors=True)  # one area at a time: none of another's state carries over
    from mutmut.__main__ import _run

    start = time.monotonic()
    _run((), max_children=int(os.environ.get("MUTATION_CORES", "2")))
    return report(name, area, time.monotonic() - start)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
