"""The replay's opt-in instrumentation: what each response reports about its request."""

import gc

from django.http import HttpResponse
from django.test import RequestFactory

from annotation.settings.bench_server import QueryCountMiddleware


def test_a_response_reports_queries_cpu_and_the_garbage_collection_it_ran():
    def view(request):
        gc.collect()  # a whole-heap collection in the request's thread
        return HttpResponse("ok")

    response = QueryCountMiddleware(view)(RequestFactory().get("/"))
    assert response["X-DB-Queries"] == "0"
    assert int(response["X-Thread-CPU-us"]) >= 0
    assert int(response["X-GC-us"]) > 0


def test_a_request_that_collects_nothing_reports_no_gc_time():
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        response = QueryCountMiddleware(lambda request: HttpResponse("ok"))(RequestFactory().get("/"))
    finally:
        if was_enabled:
            gc.enable()
    assert response["X-GC-us"] == "0"
