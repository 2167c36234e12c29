"""The audit trail: ``record`` writes one entry per staff action; ``trail`` and ``export`` read it.

Every service that carries out a staff action (a study's status and settings, readmissions and
exclusions, blocks, the Prolific operations and their dry runs, withdrawals, exports, messages) calls
``record`` in the same transaction as the change, so the entry exists exactly when the change does.

Calls state (the keyed hash that stands for a participant's identifier).
"""

from annotation.services.audit.trail import Actor, actor_name, changes, export, record, snapshot, trail

__all__ = ["Actor", "actor_name", "changes", "export", "record", "snapshot", "trail"]
