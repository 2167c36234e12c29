"""A do-nothing endpoint for the replay benchmark (bench/replay.py).

Mounted at /bench/noop/ only when BENCH_NOOP_ENDPOINT=1: it measures the
ceiling of the server stack itself (gunicorn, Django's middleware, the session
lookup), so the submit throughput can be reported as a share of it.
"""
from django.http import HttpRequest, HttpResponse
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt
def noop(request: HttpRequest) -> HttpResponse:
    return HttpResponse(b"ok", content_type="text/plain")
