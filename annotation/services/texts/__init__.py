"""Texts: what a study says to its workers, and in which language.

``study_texts`` (a study's worker-facing texts in one language, the one place that picks them),
``languages`` (the study's language, or the browser's among the shipped ones).

Calls no other capability.
"""
