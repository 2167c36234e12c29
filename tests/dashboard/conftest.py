"""The dashboard's tests: the reporting fixtures (sst2) and the worker pages' Chromium fixtures."""

from tests.reporting.conftest import sst2  # noqa: F401  (fixture)
from tests.worker.browser.conftest import browser, open_as  # noqa: F401  (fixtures)
