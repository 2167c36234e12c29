"""A small HTTP/1.1 client on asyncio, cheap enough to share two cores with the server.

One ``Browser`` is one simulated worker's browser: one keep-alive connection to
127.0.0.1, a cookie jar, the CSRF header on unsafe requests, and redirects
followed like ``fetch`` and page navigations do. Each request's latency (from
writing the request to the last byte of the body) is recorded under a name.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

HOST = "127.0.0.1"  # the benchmark and the rehearsal never target another host


class HTTPError(Exception):
    pass


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Recorder:
    """Latencies in ms by request kind, and the X-DB-Queries, X-Thread-CPU-us and X-GC-us headers of each."""

    latencies: dict[str, list[float]] = field(default_factory=dict)
    queries: dict[str, list[int]] = field(default_factory=dict)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    server_cpu_us: dict[str, list[int]] = field(default_factory=dict)  # X-Thread-CPU-us of each reply
    gc_us: list[int] = field(default_factory=list)  # X-GC-us of every reply

    def add(self, kind: str, ms: float, reply: Reply) -> None:
        self.latencies.setdefault(kind, []).append(ms)
        by_status = self.statuses.setdefault(kind, {})
        by_status[reply.status] = by_status.get(reply.status, 0) + 1
        count = reply.headers.get("x-db-queries")
        if count is not None:
            self.queries.setdefault(kind, []).append(int(count))
        cpu = reply.headers.get("x-thread-cpu-us")
        if cpu is not None:
            self.server_cpu_us.setdefault(kind, []).append(int(cpu))
        collected = reply.headers.get("x-gc-us")
        if collected is not None:
            self.gc_us.append(int(collected))


class Connection:
    def __init__(self, port: int):
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(HOST, self.port)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None

    async def _read_reply(self) -> tuple[Reply, bool]:
        reader = self.reader
        assert reader is not None, "exchange() opens the connection first"
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers: dict[str, str] = {}
        cookies: list[str] = []
        for line in lines[1:]:
            if not line:
                continue
            name, _, value = line.partition(":")
            name = name.strip().lower()
            value = value.strip()
            if name == "set-cookie":
                cookies.append(value)
            else:
                headers[name] = value
        if cookies:
            headers["set-cookie"] = "\n".join(cookies)
        if headers.get("transfer-encoding", "").lower() == "chunked":
            chunks = bytearray()
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    await reader.readuntil(b"\r\n")
                    break
                chunks += await reader.readexactly(size + 2)
                del chunks[-2:]
            body = bytes(chunks)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            body = await reader.read()
            headers["connection"] = "close"
        keep = headers.get("connection", "").lower() != "close"
        return Reply(status, headers, body), keep

    async def exchange(self, raw: bytes, *, retry: bool) -> Reply:
        for attempt in (1, 2):
            fresh = self.writer is None
            if fresh:
                await self._open()
            try:
                assert self.writer is not None
                self.writer.write(raw)
                reply, keep = await self._read_reply()
            except (ConnectionError, asyncio.IncompleteReadError):
                self.close()
                # A keep-alive connection the server closed while idle: send again on a new one.
                if fresh or attempt == 2 or not retry:
                    raise
                continue
            if not keep:
                self.close()
            return reply
        raise HTTPError("unreachable")


class Browser:
    def __init__(self, port: int, recorder: Recorder):
        self.port = port
        self.recorder = recorder
        self.connection = Connection(port)
        self.cookies: dict[str, str] = {}

    def close(self) -> None:
        self.connection.close()

    def _store_cookies(self, reply: Reply) -> None:
        for line in reply.headers.get("set-cookie", "").split("\n"):
            if "=" not in line:
                continue
            pair = line.split(";", 1)[0]
            name, _, value = pair.partition("=")
            attributes = line.lower()
            if "max-age=0" in attributes or "expires=thu, 01 jan 1970" in attributes:
                self.cookies.pop(name.strip(), None)
            else:
                self.cookies[name.strip()] = value.strip().strip('"')

    async def request(
        self,
        kind: str,
        method: str,
        path: str,
        body: dict | None = None,
        accept: str = "text/html",
        form: dict | None = None,
    ) -> Reply:
        """``body`` is sent as JSON (the session API), ``form`` as a URL-encoded form (the pages' forms)."""
        head = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}", f"Accept: {accept}"]
        if self.cookies:
            head.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        payload = b""
        if method != "GET":
            if form is not None:
                payload, content_type = urlencode(form, doseq=True).encode(), "application/x-www-form-urlencoded"
            else:
                payload, content_type = json.dumps(body if body is not None else {}).encode(), "application/json"
            head += [
                f"Content-Type: {content_type}",
                f"Content-Length: {len(payload)}",
                f"X-CSRFToken: {self.cookies.get('csrftoken', '')}",
                f"Origin: http://{HOST}:{self.port}",
                f"Referer: http://{HOST}:{self.port}/work/",
            ]
        raw = ("\r\n".join(head) + "\r\n\r\n").encode() + payload
        started = time.perf_counter()
        reply = await self.connection.exchange(raw, retry=method == "GET")
        self.recorder.add(kind, (time.perf_counter() - started) * 1000, reply)
        self._store_cookies(reply)
        return reply

    async def api(self, kind: str, method: str, path: str, body: dict | None = None) -> Reply:
        return await self.request(kind, method, path, body, accept="application/json")
