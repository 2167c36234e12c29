"""The Celery application. Without CELERY_BROKER_URL tasks run eagerly."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings")

app = Celery("annotation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotation", "annotation.reporting", "tasks_app"], related_name="celery_tasks")
