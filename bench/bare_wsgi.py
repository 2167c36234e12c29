"""A WSGI application that does nothing: what gunicorn itself costs per request (bench/request_cpu.py).

    gunicorn bench.bare_wsgi:application --worker-class gthread --threads 16

Every request is answered 200 with a small JSON body, whatever its method and path.
"""

BODY = b'{"detail": "nothing here"}'
HEADERS = [("Content-Type", "application/json"), ("Content-Length", str(len(BODY)))]


def application(environ, start_response):
    start_response("200 OK", HEADERS)
    return [BODY]
