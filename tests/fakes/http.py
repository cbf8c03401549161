"""A tiny threaded HTTP/1.1 server on 127.0.0.1 (port 0) that the protocol fakes build on.

Each fake implements `handle(request) -> Reply`; the server keeps a log of requests and
counts the bytes it sent, so tests and the benchmark can assert on what crossed the wire.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class Reply:
    status: int = 200
    body: bytes | str | Any = b""
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
        return cls(
            status,
            json.dumps(data).encode(),
            {"Content-Type": "application/json; charset=utf-8", **(headers or {})},
        )


class FakeServer:
    host = "127.0.0.1"

    def __init__(self, host: str | None = None):
        self.host = host or self.host
        self.requests: list[Request] = []
        self.bytes_sent = 0
        self.statuses: list[int] = []
        self.delay = 0.0  # seconds before every answer: a slow host
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body in one write, and no Nagle: otherwise every answer waits out
            # the client's delayed ACK (~40 ms), which no real server does.
            wbufsize = 1 << 16
            disable_nagle_algorithm = True

            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query={k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()},
                    headers={k.lower(): v for k, v in self.headers.items()},
                    body=body,
                )
                with fake.lock:
                    fake.requests.append(request)
                if fake.delay:
                    import time

                    time.sleep(fake.delay)
                try:
                    reply = fake.handle(request)
                except Exception as exc:  # a fake's bug shows as a 500 with the reason
                    reply = Reply(500, f"fake error: {exc!r}".encode())
                data = reply.body
                if not isinstance(data, bytes):
                    data = data.encode() if isinstance(data, str) else json.dumps(data).encode()
                if reply.status == 304:
                    data = b""
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                with fake.lock:
                    fake.bytes_sent += len(data)
                    fake.statuses.append(reply.status)

            do_GET = do_POST = do_HEAD = _serve

        self.server = ThreadingHTTPServer((self.host, 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self) -> FakeServer:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def handle(self, request: Request) -> Reply:
        raise NotImplementedError

    def reset_log(self) -> None:
        with self.lock:
            self.requests.clear()
            self.statuses.clear()
            self.bytes_sent = 0
