"""The HTTP layer's helpers: middleware, the Content-Security-Policy, the session API's middleware,
request cycles, the 503 page, the worker cookie and the worker's language."""
