"""The browser tests' helpers, where the tests import them from (fixtures: tests/conftest.py)."""

from tests.browser import CHROMIUM, LAUNCH_ARGS, SCREENSHOTS, csp_violations, shot, watch_csp

__all__ = ["CHROMIUM", "LAUNCH_ARGS", "SCREENSHOTS", "csp_violations", "shot", "watch_csp"]
