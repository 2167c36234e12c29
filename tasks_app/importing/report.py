"""The human-readable import report: findings (errors first), the comparison with the CLUES paper,
then what each task holds."""

from __future__ import annotations

from collections import Counter

from tasks_app.importing.findings import ERROR, INFO, WARNING, findings_table
from tasks_app.importing.paper_comparison import KIND as PAPER_COMPARISON
from tasks_app.importing.service import ImportResult


def render_report(result: ImportResult, *, dry_run: bool = False) -> str:
    parts = []
    findings = [f for f in result.findings if f.kind != PAPER_COMPARISON]
    counts = Counter(f.severity for f in findings)
    summary = ", ".join(f"{n} {severity}(s)" for severity, n in sorted(counts.items())) or "none"
    parts.append(f"Findings: {summary}")
    if findings:
        rank = {ERROR: 0, WARNING: 1, INFO: 2}
        parts.append(findings_table(sorted(findings, key=lambda f: rank[f.severity])))
    comparison = [f for f in result.findings if f.kind == PAPER_COMPARISON]
    if comparison:
        parts.append("Compared with the CLUES paper (Table 3; MNLI 7 genres x 30):")
        parts += [f"  {f.task}: {f.message}" for f in comparison]
    if any(f.is_error for f in result.findings):
        return "\n".join(parts)
    for outcome in result.tasks:
        sizes = outcome.set_sizes
        line = f"{outcome.slug}: test {sizes.get('test', 0)} items"
        for state in ("nested", "not nested", "built from largest file"):
            splits = [str(n) for n, value in sorted(outcome.nested.items()) if value == state]
            if splits:
                line += f"; split(s) {','.join(splits)} {state}"
        train = sorted({v for k, v in sizes.items() if k != "test"})
        if train:
            line += f"; training sets of {'/'.join(map(str, train))} items"
        if result.written:
            s = outcome.stats
            line += (
                f"; examples {s.examples_created} new, {s.examples_updated} updated; "
                f"sets {s.sets_written} written, {s.sets_unchanged} unchanged"
            )
        parts.append(line)
    if dry_run:
        parts.append("Dry run: nothing was written.")
    elif result.written:
        parts.append(f"Imported {len(result.tasks)} task(s).")
    return "\n".join(parts)
