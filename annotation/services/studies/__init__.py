"""Studies: configuring a study's design, texts and status (``studies``), staff previews (``preview``), and the
launch check with the way a person opens a study (``launch``).

Calls state, texts, verdicts (whether an integrity rule is set), admission and session.
"""
