"""The human-readable import report: a summary of the findings by kind (errors first), then what each
task holds; every finding one line each on request (``details``).

The real release gives hundreds of findings, most of one or two kinds; a summary with a count and one
example per kind keeps the rare kinds (a gold string not found) in sight.
"""

from __future__ import annotations

from collections import Counter

from tasks_app.importing.findings import ERROR, INFO, WARNING, Finding, findings_table
from tasks_app.importing.paper_comparison import KIND as PAPER_COMPARISON
from tasks_app.importing.service import ImportResult

RANK = {ERROR: 0, WARNING: 1, INFO: 2}


def summary_by_kind(findings: list[Finding], *, max_message: int = 90) -> str:
    """One line per kind, errors first then the most frequent: severity, kind, count, tasks, one example."""
    by_kind: dict[str, list[Finding]] = {}
    for finding in findings:
        by_kind.setdefault(finding.kind, []).append(finding)
    ordered = sorted(by_kind.items(), key=lambda item: (RANK[item[1][0].severity], -len(item[1]), item[0]))
    rows = []
    for kind, group in ordered:
        tasks = ",".join(sorted({f.task for f in group}))
        first = group[0]
        rows.append((first.severity, kind, str(len(group)), tasks, f"{first.location}: {first.message}"))
    headers = ("severity", "kind", "count", "tasks", "example")
    widths = [max(len(headers[i]), *(len(r[i]) for r in rows)) for i in range(4)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers[:4], widths, strict=True)) + "  " + headers[4]]
    lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(headers[4]))
    for row in rows:
        example = " ".join(row[4].split())
        if len(example) > max_message:
            example = example[: max_message - 1] + "…"
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), row[3].ljust(widths[3])]
        lines.append("  ".join(cells) + "  " + example)
    return "\n".join(lines)


def render_report(result: ImportResult, *, dry_run: bool = False, details: bool = False) -> str:
    parts = []
    findings = [f for f in result.findings if f.kind != PAPER_COMPARISON]
    counts = Counter(f.severity for f in findings)
    summary = ", ".join(f"{n} {severity}(s)" for severity, n in sorted(counts.items())) or "none"
    parts.append(f"Findings: {summary}")
    ordered = sorted(findings, key=lambda f: RANK[f.severity])
    if findings:
        parts.append(summary_by_kind(ordered))
        errors = [f for f in ordered if f.is_error]
        if details:
            parts += ["", "Every finding:", findings_table(ordered)]
        elif errors:  # what stopped the import is shown in full: each error needs fixing
            parts += ["", "Errors:", findings_table(errors)]
        if not details and len(ordered) > len(errors):
            parts.append("Every finding, one per line: add --details (or --json for a JSON list).")
    comparison = [f for f in result.findings if f.kind == PAPER_COMPARISON]
    if comparison:
        parts.append(f"Compared with {result.paper}:")
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
        train = sorted({v for k, v in sizes.items() if k.startswith("split ")})
        if train:
            line += f"; training sets of {'/'.join(map(str, train))} items"
        named = [f"{k} {v}" for k, v in sizes.items() if k != "test" and not k.startswith("split ")]
        if named:
            line += f"; sets {', '.join(named)}"
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
