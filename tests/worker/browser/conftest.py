"""The browser tests' helpers, where the tests import them from (fixtures: tests/conftest.py)."""

from tests.browser import HEADLESS_SHELL, LAUNCH_ARGS, SCREENSHOTS, csp_violations, shot, watch_csp

__all__ = ["HEADLESS_SHELL", "LAUNCH_ARGS", "SCREENSHOTS", "csp_violations", "shot", "watch_csp"]
