"""Settings for running behind a reverse proxy and a pooler (docs/deployment.md), parsed strictly."""

from tests.test_settings import BASE, PRODUCTION, PRODUCTION_ENV, _print, run_settings

HEADERS = "settings.SECURE_PROXY_SSL_HEADER, settings.USE_X_FORWARDED_HOST, settings.USE_X_FORWARDED_PORT"


def test_production_trusts_x_forwarded_proto_by_default_and_not_the_forwarded_host():
    result = _print(PRODUCTION_ENV, HEADERS, module=PRODUCTION)
    assert result.stdout.strip() == "('HTTP_X_FORWARDED_PROTO', 'https') False False", result.stderr


def test_the_proxy_headers_come_from_the_environment():
    env = {
        **PRODUCTION_ENV,
        "PROXY_SSL_HEADER": "X-Scheme",
        "USE_X_FORWARDED_HOST": "1",
        "USE_X_FORWARDED_PORT": "yes",
    }
    result = _print(env, HEADERS, module=PRODUCTION)
    assert result.stdout.strip() == "('HTTP_X_SCHEME', 'https') True True", result.stderr


def test_a_server_reached_directly_trusts_no_proxy_header():
    result = _print({**PRODUCTION_ENV, "PROXY_SSL_HEADER": "none"}, "settings.SECURE_PROXY_SSL_HEADER", PRODUCTION)
    assert result.stdout.strip() == "None", result.stderr


def test_a_malformed_proxy_header_names_the_variable():
    for value in ("X Forwarded Proto", "HTTP_X_FORWARDED_PROTO=https", "-x"):
        result = run_settings({**PRODUCTION_ENV, "PROXY_SSL_HEADER": value}, module=PRODUCTION)
        assert result.returncode != 0
        assert "PROXY_SSL_HEADER must be an HTTP header name" in result.stderr


def test_a_trusted_origin_must_be_scheme_and_host_only():
    for value in ("study.example.org", "https://study.example.org/path", "ftp://study.example.org"):
        result = run_settings({**PRODUCTION_ENV, "CSRF_TRUSTED_ORIGINS": value}, module=PRODUCTION)
        assert result.returncode != 0, value
        assert "CSRF_TRUSTED_ORIGINS must list origins" in result.stderr
    good = {**PRODUCTION_ENV, "CSRF_TRUSTED_ORIGINS": "https://study.example.org,https://localhost:8443"}
    assert _print(good, "settings.CSRF_TRUSTED_ORIGINS", module=PRODUCTION).returncode == 0


def test_server_side_cursors_can_be_turned_off_for_a_transaction_pooler():
    pg = {"DEBUG": "1", "DATABASE_URL": "postgres://postgres@127.0.0.1:5432/x"}
    expression = "settings.DATABASES['default']['DISABLE_SERVER_SIDE_CURSORS']"
    assert _print(pg, expression, BASE).stdout.strip() == "False"
    assert _print({**pg, "DB_DISABLE_SERVER_SIDE_CURSORS": "1"}, expression, BASE).stdout.strip() == "True"
    refused = run_settings({**pg, "DB_DISABLE_SERVER_SIDE_CURSORS": "sometimes"})
    assert refused.returncode != 0 and "DB_DISABLE_SERVER_SIDE_CURSORS must be one of" in refused.stderr
