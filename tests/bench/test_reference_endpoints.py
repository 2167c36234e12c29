"""The replay's reference endpoints: doing nothing, and the cheapest durable write (settings.bench_server)."""

import pytest
from django.db import connection
from django.test import RequestFactory
from django.urls import Resolver404, resolve

from annotation.settings import bench_server as bench
from tests.test_settings import BENCH, PRODUCTION, PRODUCTION_ENV, run_settings

pytestmark = pytest.mark.django_db


@pytest.fixture
def floor_table():
    bench.create_floor_table()


def counts() -> dict[int, int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id, n FROM {bench.FLOOR_TABLE}")
        return {row: n for row, n in cursor.fetchall() if n}


def test_each_write_adds_one_to_its_own_row_and_nothing_else(floor_table):
    factory = RequestFactory()
    for row in (3, 3, 7):
        response = bench.one_write(factory.post(f"/bench/write/{row}/", {}, content_type="application/json"), row=row)
        assert response.status_code == 200
    assert counts() == {3: 2, 7: 1}


def test_a_write_is_a_post_and_its_row_must_exist(floor_table):
    factory = RequestFactory()
    assert bench.one_write(factory.get("/bench/write/1/"), row=1).status_code == 405
    past = bench.FLOOR_ROWS
    assert bench.one_write(factory.post(f"/bench/write/{past}/"), row=past).status_code == 404
    assert counts() == {}


def test_the_table_is_made_anew_with_a_row_per_possible_browser(floor_table):
    bench.one_write(RequestFactory().post("/bench/write/0/"), row=0)
    bench.create_floor_table()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*), SUM(n) FROM {bench.FLOOR_TABLE}")
        assert cursor.fetchone() == (bench.FLOOR_ROWS, 0)
    assert bench.FLOOR_ROWS >= 64  # the replay's --concurrency goes up to 64, one row each


RESOLVE = (
    "import django; django.setup(); from django.urls import resolve, Resolver404\n"
    "for path in ('/bench/noop/', '/bench/write/5/', '/api/session/current/'):\n"
    "    try: print(resolve(path).url_name)\n"
    "    except Resolver404: print('absent')\n"
)


def test_the_endpoints_are_mounted_only_by_the_bench_settings():
    mounted = run_settings(PRODUCTION_ENV, RESOLVE, module=BENCH)
    assert mounted.stdout.split() == ["bench-noop", "bench-one-write", "current"], mounted.stderr
    for env, module in ((PRODUCTION_ENV, PRODUCTION), ({"DEBUG": "1"}, "annotation.settings.base")):
        absent = run_settings(env, RESOLVE, module=module)
        assert absent.stdout.split() == ["absent", "absent", "current"], (module, absent.stderr)


def test_the_test_settings_mount_none_of_them():
    for path in ("/bench/noop/", "/bench/write/5/"):
        with pytest.raises(Resolver404):
            resolve(path)
