"""Session: a worker's training and test steps, item by item.

``steps`` (laying a step out, where the worker is), ``answers`` (validation and the lock),
``reveal`` (gold, only after the lock), ``timing``, ``signals`` (what the page reports),
``worker_sql`` (the hot path's statements), ``samples`` (a condition's items),
``presentation`` (what workers are shown of the task), ``session_payloads`` (what the session
API answers).

Calls state, texts, verdicts and admission.
"""
