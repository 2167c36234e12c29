"""Optional Prolific operations: approve/reject, bonuses, participant groups, messages (docs/prolific.md).

Off unless ``PROLIFIC_API_TOKEN`` is set.
"""
