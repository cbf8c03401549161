"""bin/serve's stand-in model types its reply word by word at a reading pace, so a newcomer's
first turn is seen growing on the page, as a real model's would be (issue 34)."""

from __future__ import annotations

import json
import socket
import struct
import threading

import httpx
import pytest

from motion_runner.lib import standin_model
from motion_runner.lib.standin_model import REPLY, serve, word_seconds


@pytest.fixture
def pauses(monkeypatch) -> list[float]:
    """The stand-in's pauses between words, recorded instead of slept."""
    taken: list[float] = []
    monkeypatch.setattr(standin_model.time, "sleep", taken.append)
    return taken


@pytest.fixture
def standin():
    server = serve(0, word_seconds=0.25)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def text_deltas(stream: str) -> list[str]:
    deltas = []
    for block in stream.split("\n\n"):
        data = [line[len("data: ") :] for line in block.splitlines() if line.startswith("data: ")]
        if data and (event := json.loads(data[0]))["type"] == "content_block_delta":
            deltas.append(event["delta"]["text"])
    return deltas


def streamed_reply(url: str) -> str:
    body = {"model": "claude-sonnet-4-5", "stream": True, "max_tokens": 100, "messages": []}
    return httpx.post(url + "/v1/messages", json=body, timeout=10).text


def test_the_reply_is_streamed_a_word_at_a_time(standin, pauses):
    deltas = text_deltas(streamed_reply(standin))

    assert "".join(deltas) == REPLY
    assert len(deltas) == len(REPLY.split())


def test_the_words_are_paced_as_the_server_was_told(standin, pauses):
    deltas = text_deltas(streamed_reply(standin))

    assert pauses == [0.25] * (len(deltas) - 1)


def test_the_pace_is_read_from_the_environment():
    assert word_seconds({"STANDIN_WORD_SECONDS": "0.5"}) == 0.5


def test_without_a_pace_in_the_environment_a_reply_takes_seconds_not_an_instant():
    seconds = word_seconds({}) * len(REPLY.split())

    assert 3 <= seconds <= 10


@pytest.mark.parametrize("bad", ["fast", "-1", "nan", "61"])
def test_a_pace_that_is_not_a_sane_number_of_seconds_is_refused_saying_so(bad):
    with pytest.raises(SystemExit, match="STANDIN_WORD_SECONDS"):
        word_seconds({"STANDIN_WORD_SECONDS": bad})


def test_a_client_that_goes_away_mid_reply_ends_it_without_a_traceback(capfd):
    """A ■ kills the harness mid-reply; bin/serve's terminal printed 20 lines for each (issue 43.6)."""
    server = serve(0, word_seconds=0.01)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    ended = threading.Event()
    handle = standin_model.StandInHandler.handle

    def handle_then_say(self):
        try:
            handle(self)
        finally:
            ended.set()

    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(standin_model.StandInHandler, "handle", handle_then_say)
            body = json.dumps({"model": "m", "stream": True, "messages": []}).encode()
            with socket.create_connection(server.server_address, timeout=10) as client:
                client.sendall(
                    b"POST /v1/messages HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n\r\n%s" % (len(body), body)
                )
                assert client.recv(65536).startswith(b"HTTP/1.1 200")
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset
            assert ended.wait(10)
    finally:
        server.shutdown()
        server.server_close()

    assert "Traceback" not in capfd.readouterr().err


def asked(reason: str) -> dict:
    """A request as Claude Code sends a wake's prompt: the frame in the newest user message's text."""
    frame = f'<motion-wake motion="demo" reason="{reason}">\nWhat was said here…\n</motion-wake>'
    return {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": frame}]},
            {"role": "system", "content": [{"type": "text", "text": "<system-reminder>…</system-reminder>"}]},
        ],
    }


@pytest.mark.parametrize("reason", ["new_posts", "quiet"])
def test_a_look_nobody_asked_for_is_answered_with_the_silent_dot(reason):
    # Two agents answering each other's every reply through the consider loop, in an idle room.
    assert standin_model.reply_for(asked(reason)) == standin_model.SILENT


def test_a_mention_is_answered_with_the_reply_that_says_it_is_a_stand_in():
    assert standin_model.reply_for(asked("mention")) == REPLY


def test_a_streamed_look_streams_the_silent_dot(standin, pauses):
    body = {**asked("new_posts"), "stream": True}

    deltas = text_deltas(httpx.post(standin + "/v1/messages", json=body, timeout=10).text)

    assert "".join(deltas) == standin_model.SILENT
