"""State, the bottom capability: what a participation is and holds.

``lifecycle`` (the one place a participation changes state, with its event), ``slots`` (who
holds a slot, which are free, the lock order), ``outcomes`` (how a participation ends and the
code for each ending), ``platforms`` (a crowd platform's link parameters and way back).

Calls no other capability. Those that must hear of a change register a listener
(``lifecycle.on_slot_change``: the Prolific places sync, wired in ``AnnotationConfig.ready``).
"""
