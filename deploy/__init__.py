"""Deployment: nginx, gunicorn and PgBouncer configuration, and the local multi-node stack."""
