"""Human-performance reporting: scores, tables, analyses, pay, exports and plots.

Reads only stored rows (Response, Participation, ParticipationEvent, ModelRun)
and derives every number from them; nothing here is a hand-kept counter.

- options.py      the metric options every report carries (skips, ddof)
- selection.py    resolving study slugs/ids into studies, with clear errors
- scores.py       per-annotator rows and per-condition mean ± std (SQL aggregates)
- tables.py       the paper-shaped table (rows = shots, columns = tasks by group)
- analyses.py     training overlaps, majority vote, agreement, difficulty, confidence, time
- item_scores.py  the per-item score matrix behind each cell, with the skip policy applied
- bootstrap.py    two-way bootstrap intervals of cells, paired intervals of human-model gaps
- agreement.py    majority vote, Fleiss' kappa, Krippendorff's alpha (pure)
- alpha.py        Krippendorff's alpha from the stored answers (items or context tokens)
- correlation.py  Spearman's rho with ties and its bootstrap interval
- statement.py    the human-evaluation statement of a study (Markdown, LaTeX, JSON)
- statement_design.py  its sections on design and standards (sample, order, ethics, pay adequacy)
- heds.py         which HEDS 3.0 questions and ACL checklist D items each section answers
- demographics.py the survey's demographic questions as counts, small cells suppressed
- appendix.py     the exact texts workers saw, per language (study_appendix adds screenshots)
- predictions.py  model predictions upload, validated and scored by the same S1
- pay.py          pay per condition (median effective hourly pay, totals) over services/pay.py
- provenance.py   the reproducibility header of every export
- formats.py      CSV, JSON, Markdown and LaTeX (booktabs) renderings of a table
- exports.py      one function per export kind, and running an ExportJob
- planning.py     sample-size planning: interval widths with 3/5/10 workers, cost, time (simulated workers)
- rehearsal_jobs.py  a study's rehearsal as a background job (the dashboard's Rehearse button)
- plots.py        S1 against shots with error bars (matplotlib, Agg)
- recompute.py    re-deriving every stored item score with the pure scorer
"""
