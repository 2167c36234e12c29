"""Admin registrations, one module per area."""

from annotation.admin import exports, participations, studies  # noqa: F401
