"""The admin's browser tests use the worker pages' Chromium fixtures."""

from tests.worker.browser.conftest import browser, open_as  # noqa: F401  (fixtures, re-exported for pytest)
