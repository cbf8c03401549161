"""A local fake of the Anthropic Messages API for the screen's tests (real HTTP on 127.0.0.1).

`POST /v1/messages` answers with the real response shape (id, type "message", role, model,
content [{type: text, text}], stop_reason, usage with input/output/cache token counts), or with
the real error shape ({"type": "error", "error": {"type", "message"}}) for a scripted status.
Each scripted reply is one of:
  {"text": "PASS: ..."}            a normal answer
  {"status": 500}                  an error answer
  {"delay": 3.0, "text": "..."}    answer late (the client's timeout fires first)
  {"raw": "not json"}              a body that is not JSON
Every request (path, headers, JSON body) is recorded in `requests`.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeMessagesAPI:
    def __init__(self, replies: list[dict[str, Any]] | None = None, *, usage: dict[str, int] | None = None):
        self.replies = list(replies or [])
        self.usage = usage or {"input_tokens": 3400, "output_tokens": 12}
        self.requests: list[dict[str, Any]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def script(self, *replies: dict[str, Any]) -> None:
        self.replies.extend(replies)

    def __enter__(self) -> FakeMessagesAPI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                fake.requests.append({"path": self.path, "headers": dict(self.headers), "json": body})
                if self.path != "/v1/messages":
                    return self._send(404, _error("not_found_error", f"no route {self.path}"))
                reply = fake.replies.pop(0) if fake.replies else {"text": "PASS: default"}
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                if "raw" in reply:
                    return self._send(200, reply["raw"].encode(), raw_body=True)
                if reply.get("status", 200) >= 400:
                    kind = {401: "authentication_error", 429: "rate_limit_error", 529: "overloaded_error"}
                    return self._send(
                        reply["status"], _error(kind.get(reply["status"], "api_error"), "scripted")
                    )
                usage = {
                    "input_tokens": 0,
                    "output_tokens": 0,
                    "cache_creation_input_tokens": 0,
                    "cache_read_input_tokens": 0,
                    **fake.usage,
                    **reply.get("usage", {}),
                }
                return self._send(
                    200,
                    {
                        "id": f"msg_fake{len(fake.requests):04d}",
                        "type": "message",
                        "role": "assistant",
                        "model": (body or {}).get("model", "claude-haiku-4-5"),
                        "content": [{"type": "text", "text": reply["text"]}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": usage,
                    },
                )

            def _send(self, status: int, payload: Any, *, raw_body: bool = False) -> None:
                data = payload if raw_body else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and left

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}
