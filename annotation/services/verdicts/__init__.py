"""Verdicts: who goes on, who is excluded, and why.

``training_s1`` and ``training_filter`` (after training), ``filter_groups`` (the relative filter,
per condition), ``attention`` (checks: definitions, the rule, reports), ``integrity`` (the page
signals' rule), ``overrides`` (an admin's readmission or exclusion) and ``step_end`` (the one way
a step ends, applying the rules above).

Calls state.
"""
