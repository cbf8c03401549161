"""A small fake of the Anthropic Messages API (`POST /v1/messages`, streaming or not) on 127.0.0.1.

Speaks the real protocol: SSE events message_start, content_block_start/delta/stop,
message_delta, message_stop. What it answers is a tiny script: when the newest user turn
carries a tool_result, or the request offers no tools, it replies with text; otherwise it
calls the first tool named in FakeAnthropic.tool_plan that the request offers. Every request
body is kept in `requests` so a test can see what the CLI sent (tools offered, model, …).
"""

from __future__ import annotations

import itertools
import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeAnthropic:
    def __init__(self, *, reply_text: str = "Done: the file says hello.", tool_plan=None):
        self.reply_text = reply_text
        # (tool name, input) tried in order: the first one the request offers is called.
        self.tool_plan: list[tuple[str, dict[str, Any]]] = tool_plan or []
        self.requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> FakeAnthropic:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    # --- what to answer -------------------------------------------------------------------
    def answer(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content")
        after_tool = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        offered = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if not after_tool:
            for name, tool_input in self.tool_plan:
                if name in offered:
                    return [
                        {"type": "text", "text": f"Let me use {name}."},
                        {
                            "type": "tool_use",
                            "id": f"toolu_{uuid.uuid4().hex[:24]}",
                            "name": name,
                            "input": tool_input,
                        },
                    ]
        return [{"type": "text", "text": self.reply_text}]

    def _message(self, body: dict[str, Any], blocks: list[dict[str, Any]]) -> dict[str, Any]:
        stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
        return {
            "id": f"msg_fake{next(self._ids):04d}{uuid.uuid4().hex[:12]}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "claude-fake"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {
                "input_tokens": 120,
                "output_tokens": 24,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
            },
        }

    def _handler(self):
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": "no"}})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json(200, {"input_tokens": 100})
                    return
                if not path.endswith("/v1/messages"):
                    self._json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}})
                    return
                fake.requests.append(body)
                message = fake._message(body, fake.answer(body))
                if body.get("stream"):
                    self._stream(message)
                else:
                    self._json(200, message)

            def _json(self, code: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _stream(self, message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                start = dict(message, content=[], stop_reason=None)
                start["usage"] = dict(message["usage"], output_tokens=1)
                events = [("message_start", {"type": "message_start", "message": start})]
                for index, block in enumerate(message["content"]):
                    if block["type"] == "text":
                        events.append(
                            (
                                "content_block_start",
                                {
                                    "type": "content_block_start",
                                    "index": index,
                                    "content_block": {"type": "text", "text": ""},
                                },
                            )
                        )
                        events.append(
                            (
                                "content_block_delta",
                                {
                                    "type": "content_block_delta",
                                    "index": index,
                                    "delta": {"type": "text_delta", "text": block["text"]},
                                },
                            )
                        )
                    else:
                        events.append(
                            (
                                "content_block_start",
                                {
                                    "type": "content_block_start",
                                    "index": index,
                                    "content_block": dict(block, input={}),
                                },
                            )
                        )
                        events.append(
                            (
                                "content_block_delta",
                                {
                                    "type": "content_block_delta",
                                    "index": index,
                                    "delta": {
                                        "type": "input_json_delta",
                                        "partial_json": json.dumps(block["input"]),
                                    },
                                },
                            )
                        )
                    events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
                events.append(
                    (
                        "message_delta",
                        {
                            "type": "message_delta",
                            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                            "usage": {"output_tokens": message["usage"]["output_tokens"]},
                        },
                    )
                )
                events.append(("message_stop", {"type": "message_stop"}))
                for name, data in events:
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

        return Handler
