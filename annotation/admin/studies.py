"""Admin for studies, conditions, workers and participations."""
