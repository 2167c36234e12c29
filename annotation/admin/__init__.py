"""Admin registrations, one module per area."""

from annotation.admin import exports, studies  # noqa: F401
