"""study_appendix with the settings a deployment runs on: its own ALLOWED_HOSTS, HTTPS redirect on.

The browser's requests are answered in the process by the test client; they are asked for under a host
the settings serve, so the command needs no host added to ALLOWED_HOSTS (it once asked for 'testserver',
which only the test runner adds, and so failed as the README runs it)."""

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from annotation.management.commands.study_appendix import served_host
from tests.reporting.builders import make_study


@pytest.mark.parametrize(
    ("allowed", "debug", "host"),
    [
        (["study.example.org", "localhost"], False, "study.example.org"),
        ([".example.org"], False, "example.org"),
        (["*"], False, "localhost"),
        ([], True, "localhost"),
    ],
)
def test_the_pages_are_asked_for_under_a_host_the_settings_serve(allowed, debug, host):
    with override_settings(ALLOWED_HOSTS=allowed, DEBUG=debug):
        assert served_host() == host


def test_no_host_served_is_a_clear_error():
    with override_settings(ALLOWED_HOSTS=[], DEBUG=False), pytest.raises(CommandError, match="ALLOWED_HOSTS"):
        served_host()


@pytest.mark.browser
@pytest.mark.timeout(120)
def test_the_screenshots_are_taken_with_the_deployments_hosts_and_https_redirect(sst2, tmp_path, capsys):
    make_study(sst2, shots=(0, 10), slug="hosts", language="en", consent_required=True, consent_text="I agree.")
    with override_settings(ALLOWED_HOSTS=["study.example.org"], SECURE_SSL_REDIRECT=True):
        call_command("study_appendix", "hosts", "-o", str(tmp_path / "appendix"))
    out = capsys.readouterr().out
    if "screenshots skipped" in out:
        pytest.skip(out)
    for page in ("consent", "start", "training", "reveal", "test"):
        assert (tmp_path / "appendix" / f"en-{page}.png").stat().st_size > 1000, page
