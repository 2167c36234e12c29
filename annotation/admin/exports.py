"""Admin for export jobs and model runs."""
