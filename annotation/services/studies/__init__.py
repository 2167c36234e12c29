"""Studies: configuring a study's design, texts and status (``studies``), and staff previews (``preview``).

Calls state, texts, admission and session.
"""
