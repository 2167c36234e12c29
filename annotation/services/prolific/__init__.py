"""Optional Prolific operations: approve/reject, bonuses, participant groups (docs/prolific.md).

Off unless ``PROLIFIC_API_TOKEN`` is set.
"""
