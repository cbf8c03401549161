"""A small fake Anthropic Messages API on 127.0.0.1, for the real harness CLIs and our own calls.

It speaks the real wire protocol, so the real `claude` binary (and any httpx client) can't
tell it from api.anthropic.com:

- `POST /v1/messages` with `"stream": true`: Server-Sent Events in the real order
  (message_start, ping, per block content_block_start / content_block_delta (text_delta or
  input_json_delta) / content_block_stop, message_delta with stop_reason and usage,
  message_stop); without it, one Message JSON object.
- `POST /v1/messages/count_tokens`: `{"input_tokens": N}` (a rough count of the body).
- Errors in the real shape: HTTP status, `request-id` header and
  `{"type": "error", "error": {"type": ..., "message": ...}, "request_id": ...}`.
- Anything else: 404 with the real not_found_error body (and it is recorded, so a test
  sees what a new CLI version started calling).

Use it as a context manager (or through a pytest fixture):

    with FakeAnthropic() as api:
        api.script(
            Reply(Text("Let me look."), ToolUse("Read", {"file_path": "/w/README.md"})),
            Reply(Text("It says hello.")),
        )
        env = api.env()          # ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ...
        ...run the CLI...
        api.requests             # every request, with its parsed JSON body
        api.message_requests()   # just the POST /v1/messages ones
        api.requests[0].tool_names  # the tools the CLI offered the model
        api.requests[0].offered_tool_names  # ...and the deferred ones (MCP tools behind ToolSearch)

Which response answers which request:

- `api.script(*responses)` appends to a FIFO queue; each `/v1/messages` request that no
  route claims takes the next one. An empty queue answers with `api.default` (a short
  text reply unless you set it; set it to None to make an empty queue a 500 error, so a
  test notices an unexpected extra call).
- `api.route(predicate, response)` answers every request the predicate accepts (a
  callable given the FakeRequest) with `response`, or with `response(request)` when it is
  callable. Routes are tried before the queue, in the order they were added. Use this for
  side calls (a "screen" call on a small model answering PASS, say), so they don't eat
  the main script: `api.route(lambda r: r.model.startswith("claude-haiku"), Reply(Text("PASS")))`.

Responses: `Reply(*blocks, stop_reason=None, usage=Usage(...), model=None, id=None)` with
blocks `Text(text)`, `ToolUse(name, input, id=None)`, `Thinking(text)`; `ApiError(status,
type, message)` (use `ApiError.overloaded()` for 529 and `ApiError.server()` for 500);
`Hang(seconds=None)` which holds the request open (until the server stops when None);
`StreamError(after=Reply, error=ApiError)` which starts a stream and then sends an SSE
`error` event mid-stream. Each Reply gets a fresh `msg_…` id unless given one.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# --- responses ----------------------------------------------------------------------------


@dataclass
class Usage:
    input_tokens: int = 12
    output_tokens: int = 6
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "cache_read_input_tokens": self.cache_read_input_tokens,
            "output_tokens": self.output_tokens,
            "service_tier": "standard",
        }


@dataclass
class Text:
    text: str


@dataclass
class Thinking:
    thinking: str
    signature: str = "fake-signature"


@dataclass
class ToolUse:
    name: str
    input: dict[str, Any]
    id: str | None = None


Block = Text | ToolUse | Thinking


class Reply:
    """One assistant message: its content blocks, stop reason and usage."""

    def __init__(
        self,
        *blocks: Block,
        stop_reason: str | None = None,
        usage: Usage | None = None,
        model: str | None = None,
        id: str | None = None,
        chunk_size: int = 12,
        delay: float = 0.0,
    ):
        self.blocks = list(blocks)
        self.stop_reason = stop_reason or (
            "tool_use" if any(isinstance(b, ToolUse) for b in blocks) else "end_turn"
        )
        self.usage = usage or Usage()
        self.model = model
        self.id = id
        # Text and tool input are streamed in pieces of this many characters, `delay`
        # seconds apart, like the real API.
        self.chunk_size = chunk_size
        self.delay = delay


@dataclass
class ApiError:
    status: int = 500
    type: str = "api_error"
    message: str = "Internal server error"
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def overloaded(cls) -> ApiError:
        return cls(529, "overloaded_error", "Overloaded")

    @classmethod
    def server(cls) -> ApiError:
        return cls(500, "api_error", "Internal server error")

    @classmethod
    def invalid(cls, message: str = "Invalid request") -> ApiError:
        return cls(400, "invalid_request_error", message)

    @classmethod
    def authentication(cls) -> ApiError:
        return cls(401, "authentication_error", "invalid x-api-key")

    def body(self, request_id: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": self.type, "message": self.message},
            "request_id": request_id,
        }


@dataclass
class Hang:
    """Accept the request and never answer (or answer nothing for `seconds`, then drop it)."""

    seconds: float | None = None


@dataclass
class StreamError:
    """Start a stream (message_start and the reply's first block) and then send an error event."""

    after: Reply
    error: ApiError = field(default_factory=ApiError.overloaded)


@dataclass
class Garbage:
    """A body that is not the API's JSON at all (a proxy's error page, say)."""

    body: str = "<html>502 Bad Gateway</html>"
    status: int = 200
    content_type: str = "text/html"


Response = Reply | ApiError | Hang | StreamError | Garbage
Responder = Response | Callable[["FakeRequest"], Response]


# --- requests -----------------------------------------------------------------------------

DEFERRED_TOOLS_HEADER = "The following deferred tools are now available via ToolSearch."


@dataclass
class FakeRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float = field(default_factory=time.time)
    response: str = ""  # what it was answered with, for debugging a test

    @property
    def model(self) -> str:
        return str((self.body or {}).get("model") or "") if isinstance(self.body, dict) else ""

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def tool_names(self) -> list[str]:
        """The tools the client offered the model in this request."""
        tools = (self.body or {}).get("tools") if isinstance(self.body, dict) else None
        return [str(t.get("name")) for t in tools or [] if isinstance(t, dict)]

    @property
    def deferred_tool_names(self) -> list[str]:
        """Tools the client offers by name only, loadable through ToolSearch. Claude Code
        2.1.332 lists them in a message of role "system" ("The following deferred tools are
        now available via ToolSearch. … :" then one name a line); MCP tools are among them
        whenever ToolSearch is on offer."""
        names: list[str] = []
        for message in self.messages:
            content = message.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
            for block in blocks:
                text = str(block.get("text", "")) if isinstance(block, dict) else ""
                head, found, rest = text.partition(DEFERRED_TOOLS_HEADER)
                if not found:
                    continue
                lines = rest.split("\n")[1:]  # the rest of the header's own line
                for line in lines:
                    if not line.strip():
                        break
                    names.append(line.strip())
        return names

    @property
    def offered_tool_names(self) -> list[str]:
        """Everything the model could call: the tools in the request and the deferred ones
        (not the placeholder that keeps deferred loading on)."""
        direct = [name for name in self.tool_names if name != "DeferredToolPlaceholder"]
        return direct + [name for name in self.deferred_tool_names if name not in direct]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list((self.body or {}).get("messages") or []) if isinstance(self.body, dict) else []

    @property
    def system_text(self) -> str:
        system = (self.body or {}).get("system") if isinstance(self.body, dict) else None
        if isinstance(system, str):
            return system
        return "\n".join(str(b.get("text", "")) for b in system or [] if isinstance(b, dict))

    def last_user_text(self) -> str:
        """The text of the last user message (tool results included), for routing on it."""
        for message in reversed(self.messages):
            if message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            parts = []
            for block in content or []:
                if block.get("type") == "text":
                    parts.append(str(block.get("text", "")))
                elif block.get("type") == "tool_result":
                    inner = block.get("content")
                    if isinstance(inner, str):
                        parts.append(inner)
                    else:
                        parts.extend(str(b.get("text", "")) for b in inner or [] if isinstance(b, dict))
            return "\n".join(parts)
        return ""


# --- the server ---------------------------------------------------------------------------


class FakeAnthropic:
    DEFAULT_MODEL = "claude-sonnet-4-5-20250929"

    def __init__(self, *responses: Responder, default: Responder | None = None, host: str = "127.0.0.1"):
        self.requests: list[FakeRequest] = []
        self.default: Responder | None = default if default is not None else Reply(Text("OK."))
        self._queue: deque[Responder] = deque(responses)
        self._routes: list[tuple[Callable[[FakeRequest], bool], Responder]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._host = host
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # scripting
    def script(self, *responses: Responder) -> FakeAnthropic:
        with self._lock:
            self._queue.extend(responses)
        return self

    def route(self, predicate: Callable[[FakeRequest], bool], response: Responder) -> FakeAnthropic:
        with self._lock:
            self._routes.append((predicate, response))
        return self

    @property
    def pending(self) -> int:
        """Scripted responses not yet taken."""
        with self._lock:
            return len(self._queue)

    def message_requests(self) -> list[FakeRequest]:
        return [r for r in self.requests if r.method == "POST" and r.path.split("?")[0] == "/v1/messages"]

    # lifecycle
    @property
    def port(self) -> int:
        assert self._server is not None, "the fake is not started"
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment that points Claude Code (or an Anthropic SDK) at this fake."""
        return {
            "ANTHROPIC_BASE_URL": self.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            **extra,
        }

    def start(self) -> FakeAnthropic:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer((self._host, 0), handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="fake-anthropic",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # internals
    def _next_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):04d}{uuid.uuid4().hex[:16]}"

    def _choose(self, request: FakeRequest) -> Response | None:
        with self._lock:
            chosen: Responder | None = None
            for predicate, response in self._routes:
                if predicate(request):
                    chosen = response
                    break
            else:
                chosen = self._queue.popleft() if self._queue else self.default
        if callable(chosen) and not isinstance(chosen, (Reply, ApiError, Hang, StreamError, Garbage)):
            chosen = chosen(request)
        return chosen


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def _chunks(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeAnthropic
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # routing
    def _record(self) -> FakeRequest:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        request = FakeRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
        )
        with self.fake._lock:
            self.fake.requests.append(request)
        return request

    def do_POST(self) -> None:
        request = self._record()
        path = self.path.split("?")[0]
        if path == "/v1/messages":
            self._messages(request)
        elif path == "/v1/messages/count_tokens":
            size = len(json.dumps(request.body)) if request.body else 0
            request.response = "count_tokens"
            self._json(200, {"input_tokens": max(1, size // 4)})
        else:
            self._not_found(request)

    def do_GET(self) -> None:
        self._not_found(self._record())

    def do_HEAD(self) -> None:
        request = self._record()
        request.response = "HEAD 200"
        self.send_response(200)
        self.send_header("content-length", "0")
        self.end_headers()

    def _not_found(self, request: FakeRequest) -> None:
        request.response = "404"
        self._error(ApiError(404, "not_found_error", f"Not found: {self.command} {self.path}"))

    # answers
    def _json(self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", self.fake._next_id("req"))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, error: ApiError) -> None:
        request_id = self.fake._next_id("req")
        data = json.dumps(error.body(request_id)).encode()
        self.send_response(error.status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.send_header("request-id", request_id)
        if error.status in (429, 529) and "retry-after" not in {k.lower() for k in error.headers}:
            self.send_header("retry-after", "0")
        for name, value in error.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _messages(self, request: FakeRequest) -> None:
        response = self.fake._choose(request)
        if response is None:
            request.response = "500 (script empty, no default)"
            self._error(ApiError(500, "api_error", "fake: no scripted response left for this request"))
            return
        request.response = type(response).__name__
        if isinstance(response, ApiError):
            self._error(response)
        elif isinstance(response, Hang):
            self.fake._stopping.wait(response.seconds)
            self.close_connection = True
        elif isinstance(response, StreamError):
            self._stream(request, response.after, error=response.error)
        elif isinstance(response, Garbage):
            payload = response.body.encode()
            self.send_response(response.status)
            self.send_header("content-type", response.content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        elif request.stream:
            self._stream(request, response)
        else:
            self._json(200, self._message_object(request, response, with_content=True))

    def _message_object(self, request: FakeRequest, reply: Reply, *, with_content: bool) -> dict[str, Any]:
        if reply.id is None:
            reply.id = self.fake._next_id("msg")
        for block in reply.blocks:
            if isinstance(block, ToolUse) and block.id is None:
                block.id = self.fake._next_id("toolu")
        content: list[dict[str, Any]] = []
        if with_content:
            content = [self._block_dict(b) for b in reply.blocks]
        usage = reply.usage.as_dict()
        return {
            "id": reply.id,
            "type": "message",
            "role": "assistant",
            "model": reply.model or request.model or FakeAnthropic.DEFAULT_MODEL,
            "content": content,
            "stop_reason": reply.stop_reason if with_content else None,
            "stop_sequence": None,
            "usage": usage if with_content else {**usage, "output_tokens": 1},
        }

    @staticmethod
    def _block_dict(block: Block) -> dict[str, Any]:
        if isinstance(block, Text):
            return {"type": "text", "text": block.text}
        if isinstance(block, Thinking):
            return {"type": "thinking", "thinking": block.thinking, "signature": block.signature}
        return {"type": "tool_use", "id": block.id, "name": block.name, "input": block.input}

    def _stream(self, request: FakeRequest, reply: Reply, error: ApiError | None = None) -> None:
        message = self._message_object(request, reply, with_content=False)
        self.send_response(200)
        self.send_header("content-type", "text/event-stream; charset=utf-8")
        self.send_header("cache-control", "no-cache")
        self.send_header("request-id", self.fake._next_id("req"))
        # No content-length: the stream ends when the connection closes.
        self.send_header("connection", "close")
        self.end_headers()
        self.close_connection = True
        write = self._write
        write(_sse("message_start", {"type": "message_start", "message": message}))
        write(_sse("ping", {"type": "ping"}))
        for index, block in enumerate(reply.blocks):
            if isinstance(block, Text):
                start = {"type": "text", "text": ""}
                deltas = [
                    {"type": "text_delta", "text": piece} for piece in _chunks(block.text, reply.chunk_size)
                ]
            elif isinstance(block, Thinking):
                start = {"type": "thinking", "thinking": "", "signature": ""}
                deltas = [
                    {"type": "thinking_delta", "thinking": piece}
                    for piece in _chunks(block.thinking, reply.chunk_size)
                ] + [{"type": "signature_delta", "signature": block.signature}]
            else:
                start = {"type": "tool_use", "id": block.id, "name": block.name, "input": {}}
                deltas = [
                    {"type": "input_json_delta", "partial_json": piece}
                    for piece in [""] + _chunks(json.dumps(block.input), reply.chunk_size)
                ]
            write(
                _sse(
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": start},
                )
            )
            if error is not None:
                write(_sse("error", error.body(self.fake._next_id("req"))))
                return
            for delta in deltas:
                if reply.delay:
                    time.sleep(reply.delay)
                write(
                    _sse(
                        "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
                    )
                )
            write(_sse("content_block_stop", {"type": "content_block_stop", "index": index}))
        if error is not None:
            write(_sse("error", error.body(self.fake._next_id("req"))))
            return
        usage = reply.usage.as_dict()
        write(
            _sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": reply.stop_reason, "stop_sequence": None},
                    "usage": {
                        "input_tokens": usage["input_tokens"],
                        "cache_creation_input_tokens": usage["cache_creation_input_tokens"],
                        "cache_read_input_tokens": usage["cache_read_input_tokens"],
                        "output_tokens": usage["output_tokens"],
                    },
                },
            )
        )
        write(_sse("message_stop", {"type": "message_stop"}))

    def _write(self, data: bytes) -> None:
        try:
            self.wfile.write(data)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def tool_then_reply(
    tool_plan: list[tuple[str, dict[str, Any]]], reply_text: str, usage: Usage | None = None
) -> Callable[[FakeRequest], Reply]:
    """A responder for whole sessions: a request that is not answering a tool result calls the
    first tool of the plan the CLI offered; any other request (a tool result, a compaction)
    gets the reply. Every answer reports `usage` (Usage() when None)."""

    def respond(request: FakeRequest) -> Reply:
        messages = request.messages
        last = messages[-1] if messages else {}
        content = last.get("content") if isinstance(last, dict) else None
        after_tool = isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        )
        if not after_tool:
            for name, tool_input in tool_plan:
                if name in request.tool_names:
                    return Reply(Text(f"Let me use {name}."), ToolUse(name, tool_input), usage=usage)
        return Reply(Text(reply_text), usage=usage)

    return respond
