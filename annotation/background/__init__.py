"""Celery's entry points for the study machinery (``celery_tasks``); the long jobs they run are
``annotation.services.jobs``."""
