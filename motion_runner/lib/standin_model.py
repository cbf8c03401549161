"""A stand-in for the Anthropic Messages API, for a newcomer's first run without a model key.

`bin/serve` starts it (`python -m motion_runner.lib.standin_model PORT`) when it finds no
`ANTHROPIC_API_KEY` and no `claude /login`, and the harness environment points a Claude Code
agent that has no key of its own at it (motion_runner/harnesses/env.py). Everything else in the
turn is real — the wake, the harness CLI, the stream into the thread — and the reply says plainly
that it came from a stand-in and how to set a real key. It speaks the real wire protocol (the
same Server-Sent Events the tests' fake model server sends), bills nothing and keeps nothing.
It types the reply a word at a time (`STANDIN_WORD_SECONDS` apart, ~6 s in all by default), so
the page shows it growing as a real model's would.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
import time
import uuid
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

REPLY = (
    "(This reply is from a stand-in, not a model.) Motion Runner found no model key, so this turn "
    "ran against a local stand-in that `bin/serve` started: the wake, the harness and the stream "
    "into this thread were real, the words are not. To hear a real agent, set `ANTHROPIC_API_KEY` "
    "in the environment `bin/serve` runs in (or per agent in the admin, under Agents → env), or "
    "sign in once with `claude /login`; then restart `bin/serve`."
)
# A look nobody asked for (a consideration, a long quiet) is answered with the dot a real model
# gives when it has nothing to add: a stand-in that answered every look would keep two agents
# answering each other's replies through the consider loop, every ~20 s, in an idle room.
SILENT = "<silent>a stand-in, not a model: nothing to add to a look nobody asked for</silent>"
SILENT_REASONS = frozenset({"new_posts", "quiet"})
WAKE_REASON = re.compile(r'<motion-wake\b[^>]*\breason="([a-z_]+)"')


def reply_for(body: Mapping[str, Any]) -> str:
    """REPLY, or SILENT when the newest wake frame in the request is a look nobody asked for."""
    # The newest user message: Claude Code sends a system-role message after it (its reminders).
    messages = body.get("messages") if isinstance(body.get("messages"), list) else []
    users = [m for m in messages if isinstance(m, dict) and m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    said = "\n".join(
        b if isinstance(b, str) else str(b.get("text") or "") for b in blocks if isinstance(b, str | dict)
    )
    reasons = WAKE_REASON.findall(said)
    return SILENT if reasons and reasons[-1] in SILENT_REASONS else REPLY


# What the CLI is told the reply used: nothing, so the turn costs $0 in the ledger.
NO_USAGE = {
    "input_tokens": 0,
    "cache_creation_input_tokens": 0,
    "cache_read_input_tokens": 0,
    "output_tokens": 0,
}
# Seconds between two words: the ~80-word reply is typed in ~6 s, slow enough to be seen growing.
WORD_SECONDS = 0.08
WORD = re.compile(r"\S+\s*")


def word_seconds(environ: Mapping[str, str]) -> float:
    """The pace from `STANDIN_WORD_SECONDS` (0 to 60), or WORD_SECONDS; anything else stops the start."""
    given = environ.get("STANDIN_WORD_SECONDS", "")
    if not given:
        return WORD_SECONDS
    try:
        seconds = float(given)
    except ValueError:
        seconds = math.nan
    if not 0 <= seconds <= 60:  # also refuses nan
        raise SystemExit(f"STANDIN_WORD_SECONDS must be seconds between two words (0 to 60), not {given!r}")
    return seconds


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def reply_events(model: str, text: str = REPLY) -> list[bytes]:
    """The stream of one text reply, in the order the real API sends it, a delta a word."""
    message = {
        "id": f"msg_standin_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {**NO_USAGE, "output_tokens": 1},
    }
    return [
        sse("message_start", {"type": "message_start", "message": message}),
        sse(
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        *(
            sse(
                "content_block_delta",
                {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": word}},
            )
            for word in WORD.findall(text)
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": NO_USAGE,
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]


class StandInHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # bin/serve says one line for the part
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return self._json(400, error_body("invalid_request_error", "the body is not a JSON object"))
        path = self.path.split("?", 1)[0]
        model = str(body.get("model") or "stand-in")
        if path == "/v1/messages/count_tokens":
            return self._json(200, {"input_tokens": len(json.dumps(body)) // 4})
        if path != "/v1/messages":
            return self._json(404, error_body("not_found_error", f"the stand-in has no {path}"))
        text = reply_for(body)
        if body.get("stream"):
            return self._stream(model, text)
        content = [{"type": "text", "text": text}]
        self._json(
            200,
            {
                "id": f"msg_standin_{uuid.uuid4().hex[:20]}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": content,
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": NO_USAGE,
            },
        )

    def do_GET(self) -> None:
        self._json(404, error_body("not_found_error", f"the stand-in has no {self.path}"))

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, model: str, text: str = REPLY) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("connection", "close")  # the stream ends when the connection closes
        self.end_headers()
        self.close_connection = True
        typing = False
        for event in reply_events(model, text):
            is_word = event.startswith(b"event: content_block_delta")
            if is_word and typing:
                time.sleep(self.server.word_seconds)  # type: ignore[attr-defined]
            typing = typing or is_word
            try:
                self.wfile.write(event)
                self.wfile.flush()
            except OSError:  # the harness went away (a ■ stopped the turn): the reply just ends
                return


def error_body(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def serve(port: int, host: str = "127.0.0.1", word_seconds: float = WORD_SECONDS) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer((host, port), StandInHandler)
    server.daemon_threads = True
    server.word_seconds = word_seconds  # type: ignore[attr-defined]
    return server


if __name__ == "__main__":  # python -m motion_runner.lib.standin_model PORT
    serve(int(sys.argv[1]), word_seconds=word_seconds(os.environ)).serve_forever()
