"""The wrapper's transport: an overall deadline per request (every read and write of the
connection bounded by what is left of it), and a body decoder that stops at the size cap."""

from __future__ import annotations

import threading
import time
import zlib
from typing import Any

import httpcore
import httpx

from .base import FetchError

# The deadline of the request this thread is sending: every socket read and write waits at most
# until then, so a server that trickles its status line or headers a byte at a time cannot hold
# a worker past it (httpx's own timeouts are per read, and restart with every byte).
_deadline = threading.local()


def _remaining(timeout: float | None) -> float | None:
    deadline = getattr(_deadline, "at", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the request's overall deadline passed")
    return left if timeout is None else min(timeout, left)


class DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _remaining(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _remaining(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> httpcore.NetworkStream:
        return DeadlineStream(self._stream.start_tls(ssl_context, server_hostname, _remaining(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        stream = self._backend.connect_tcp(host, port, _remaining(timeout), local_address, socket_options)
        return DeadlineStream(stream)

    def connect_unix_socket(self, path, timeout=None, socket_options=None):  # pragma: no cover
        raise httpcore.ConnectError("no unix sockets here")

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_transport(max_connections: int) -> httpx.HTTPTransport:
    transport = httpx.HTTPTransport(trust_env=False)
    # httpx takes no network backend: its pool is swapped for one built with httpcore's public
    # arguments and the deadline-keeping backend.
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(trust_env=False),
        max_connections=max_connections,
        network_backend=DeadlineBackend(),
    )
    return transport


# Only what can be decoded a chunk at a time under a cap is asked for.
ACCEPT_ENCODING = "gzip, deflate"


class CappedDecoder:
    """Undo a gzip or deflate Content-Encoding as the chunks arrive, never producing more than
    `limit` bytes: a 500-byte bomb stops at the cap instead of growing in memory first."""

    def __init__(self, encoding: str, limit: int, host: str):
        self.limit, self.host, self.size = limit, host, 0
        encoding = encoding.strip().lower()
        if encoding in ("gzip", "x-gzip"):
            self.zlib = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif encoding == "deflate":
            self.zlib = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped, as RFC 9110 says
        elif encoding in ("", "identity"):
            self.zlib = None
        else:
            raise FetchError(
                f"{host} sent a body encoded as {encoding!r}, which is not asked for", permanent=True
            )

    def feed(self, chunk: bytes) -> bytes:
        if self.zlib is None:
            out = chunk
        else:
            try:
                out = self.zlib.decompress(chunk, self.limit - self.size + 1)
            except zlib.error as exc:
                raise FetchError(f"{self.host}: could not decode the body ({exc})") from exc
        self.size += len(out)
        if self.size > self.limit or (self.zlib is not None and self.zlib.unconsumed_tail):
            raise FetchError(f"{self.host} sent more than {self.limit} bytes (decoded)")
        return out

    def flush(self) -> bytes:
        return self.feed(b"") if self.zlib is None else self.zlib.flush()
