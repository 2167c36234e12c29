"""The protocol's rules as plain functions, one sub-package per capability.

Pages, the APIs, the commands and the Celery tasks all call these; none of them holds a rule of
its own. A capability calls only those its docstring names (the table in docs/development.md,
"Capabilities", enforced by tests/test_layers.py), lowest first:

- ``state``: the bottom; participation states (``lifecycle``), slots, outcomes and codes,
  platform parameters
- ``texts``: a study's worker-facing texts and the language a worker sees
- ``money``: the pay rule
- ``jobs`` (one module): background jobs, whatever they do
- ``verdicts``: training filter and S1, the group filter, attention, integrity, admin overrides,
  and the end of a step that applies them (calls state)
- ``admission``: the entry link, consent, comprehension check, survey, blocklist, abandonment,
  closing (calls state, texts)
- ``session``: a worker's step: layout, answers and their lock, reveal, timing, page signals,
  the worker's SQL, samples, what the session API answers (calls state, texts, verdicts, admission)
- ``studies``: configuring studies, staff previews (calls state, texts, admission, session)
- ``prolific``: the Prolific operations, webhooks and places (calls state, money, admission, jobs)
"""
