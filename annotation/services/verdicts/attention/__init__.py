"""Attention checks: define them, mix them into a worker's test step, score them and apply the rule.

A check is an item whose answer the item itself states ("To show you are reading, choose 'negative'";
"Select the word 'orange' in this sentence: ..."). It appears as item number ``position`` of every
worker's test step, whatever the study's test order (a shuffled order moves the test items only), and
looks like any other item: it is served through a Response row pointing at the check's own Example
(in no example set, so never in the test set or its hash) with ``Response.attention_check`` set.
``Response.objects`` leaves such rows out, so S1, the tables, the agreement and the exports never see
them; this package reads them through ``Response.all_objects``.

A check is passed when the worker's answer scores S1 = 1 against the expected answer (a skip, or any
other answer, fails). At the end of the test step (``step_end``) ``judge`` logs an ``AttentionDecision`` for a
worker who had checks and applies the study's rule: with ``attention_fail_limit`` N > 0, a worker with
N failures or more is flagged for review (still completed) or excluded (state excluded with
``exclusion_kind = "attention"``, paid and given a code as any excluded worker).

``definitions`` writes and validates the checks (a researcher's own, or templates one every N
items); ``rule`` places them in the test step, tallies them and judges the worker (``rule.judge``);
``reports`` is the per-worker report. Callers name the module: ``attention.rule.judge(...)``.
"""

from annotation.services.verdicts.attention import definitions, reports, rule

__all__ = ["definitions", "reports", "rule"]
