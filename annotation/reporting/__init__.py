"""Human-performance reporting: scores, tables, analyses, pay, exports and plots.

Reads only stored rows (Response, Participation, ParticipationEvent, ModelRun)
and derives every number from them; nothing here is a hand-kept counter.

- options.py      the metric options every report carries (skips, ddof)
- selection.py    resolving study slugs/ids into studies, with clear errors
- scores.py       per-annotator rows and per-condition mean ± std (SQL aggregates)
- tables.py       the paper-shaped table (rows = shots, columns = tasks by group)
- analyses.py     training overlaps, majority vote, agreement, difficulty, confidence, time
- predictions.py  model predictions upload, validated and scored by the same S1
- pay.py          paid time, pay at the hourly rate, effective hourly pay, bonuses
- provenance.py   the reproducibility header of every export
- formats.py      CSV, JSON, Markdown and LaTeX renderings of a table
- exports.py      one function per export kind, and running an ExportJob
- plots.py        S1 against shots with error bars (matplotlib, Agg)
- recompute.py    re-deriving every stored item score with the pure scorer
"""
