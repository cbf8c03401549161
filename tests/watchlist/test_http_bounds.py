"""Issue 10, findings 4 and 9: a body is decoded under the cap as it arrives, and one overall
deadline covers the whole exchange, the status line and headers included."""

from __future__ import annotations

import gzip
import socket
import threading
import time
import tracemalloc

import pytest

from motion_runner.lib.http.base import FetchError
from motion_runner.lib.http.client import HttpClient
from tests.fakes.http import FakeServer, Reply

BOMB = gzip.compress(b"\0" * (64 * 1024 * 1024), compresslevel=9)  # ~64 KB on the wire


class Encoded(FakeServer):
    """`/bomb`: 64 MiB of zeros, gzipped; `/twice`: gzip of gzip; `/br`: says brotli."""

    def handle(self, request):
        if request.path == "/bomb":
            return Reply(200, BOMB, {"Content-Encoding": "gzip"})
        if request.path == "/twice":
            return Reply(200, gzip.compress(BOMB), {"Content-Encoding": "gzip, gzip"})
        if request.path == "/br":
            return Reply(200, b"\x0b\x02\x80hello\x03", {"Content-Encoding": "br"})
        if request.path == "/small":
            return Reply(200, gzip.compress(b"hello " * 100), {"Content-Encoding": "gzip"})
        return Reply(404, b"")


@pytest.fixture
def encoded():
    with Encoded() as fake:
        yield fake


def test_a_gzip_bomb_stops_at_the_cap_without_growing_in_memory(encoded):
    tracemalloc.start()
    try:
        with HttpClient(allow=["127.0.0.1"], max_bytes=2 * 1024 * 1024) as client:
            with pytest.raises(FetchError, match="decoded"):
                client.get(encoded.url + "/bomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 1024 * 1024, f"decoding grew memory by {peak / 2**20:.0f} MiB"


def test_a_body_encoded_twice_over_is_refused(encoded):
    with HttpClient(allow=["127.0.0.1"]) as client, pytest.raises(FetchError, match="encoded 2 times"):
        client.get(encoded.url + "/twice")


def test_an_encoding_that_was_not_asked_for_is_refused(encoded):
    with HttpClient(allow=["127.0.0.1"]) as client, pytest.raises(FetchError, match="not asked for"):
        client.get(encoded.url + "/br")


def test_a_small_gzip_body_is_decoded(encoded):
    with HttpClient(allow=["127.0.0.1"]) as client:
        response = client.get(encoded.url + "/small")
    assert response.content == b"hello " * 100
    assert encoded.requests[0].header("accept-encoding") == "gzip, deflate"


# The trickle outlasts the client's 1 s deadline many times over, so a bound far above the
# deadline (room for a busy 2-core machine) still tells a cut from a trickle that ran to its end.
TRICKLE_SECONDS = 60
CUT_WITHIN_SECONDS = 30


@pytest.fixture
def trickler():
    """A server that sends its status line, then one header byte every 0.1 s for up to TRICKLE_SECONDS."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    stop = threading.Event()

    def serve():
        listener.settimeout(TRICKLE_SECONDS)
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            deadline = time.monotonic() + TRICKLE_SECONDS
            while not stop.is_set() and time.monotonic() < deadline:
                try:
                    conn.sendall(b"a")
                except OSError:
                    return
                time.sleep(0.1)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    stop.set()
    listener.close()
    thread.join(10)


def test_headers_trickled_a_byte_at_a_time_do_not_outlast_the_deadline(trickler):
    started = time.monotonic()
    with (
        HttpClient(allow=["127.0.0.1"], timeout=0.5) as client,
        pytest.raises(FetchError, match="longer than 1"),
    ):
        client.get(trickler)
    assert time.monotonic() - started < CUT_WITHIN_SECONDS  # cut at the deadline, not the trickle's end
