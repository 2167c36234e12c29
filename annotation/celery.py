"""The Celery application. Without CELERY_BROKER_URL tasks run eagerly."""

import os

from celery import Celery

# The package imports this module, so this default is also that of anything importing ``annotation`` before
# choosing settings (gunicorn's annotation.wsgi included): production, like the WSGI and ASGI apps.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "annotation.settings.production")

app = Celery("annotation")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["annotation.background", "annotation.reporting", "tasks_app"], related_name="celery_tasks")
