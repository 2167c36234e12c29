"""The dashboard's tests use the reporting fixtures (sst2)."""

from tests.reporting.conftest import sst2  # noqa: F401  (fixture)
