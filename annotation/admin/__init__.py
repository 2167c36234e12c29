"""Admin registrations, one module per area."""

from annotation.admin import audit, exports, participations, studies  # noqa: F401
