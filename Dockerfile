# The app's image: gunicorn nodes, the Celery worker and beat all run it (compose.yaml).
# Kept in step with the tested scripts (tests/deploy/localstack.py): the same requirements,
# the same gunicorn config (deploy/gunicorn.conf.py), the same production settings from the
# environment; tests/test_compose.py checks the two agree. This project's machines cannot run
# containers: the image is not built in CI, the scripts are what is exercised (docs/deployment.md).
FROM python:3.11-slim-bookworm

ENV PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    DJANGO_SETTINGS_MODULE=annotation.settings.production \
    STATIC_ROOT=/srv/annotation/static \
    MEDIA_ROOT=/srv/annotation/media \
    GUNICORN_BIND=0.0.0.0:8000

WORKDIR /app
COPY requirements.txt .
RUN pip install -r requirements.txt
COPY . .
RUN useradd --system --uid 10001 --home-dir /app annotation \
    && mkdir -p /srv/annotation/static /srv/annotation/media \
    && chown -R annotation /srv/annotation

USER annotation
EXPOSE 8000
# compose.yaml's migrate service runs `manage.py migrate` and `collectstatic` (into the volume nginx
# serves) before the nodes start; the worker and beat override this command.
CMD ["gunicorn", "-c", "deploy/gunicorn.conf.py", "annotation.wsgi:application"]
