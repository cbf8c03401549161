"""A fake OpenAI API on 127.0.0.1 for the Codex and Pi CLIs, scripted by the test.

Two streaming endpoints, each speaking the real wire format (server-sent events):

- `POST /v1/responses` — the Responses API, which Codex uses (`wire_api = "responses"`):
  `response.created`, `response.in_progress`, `response.output_item.added`,
  `response.content_part.added`, `response.output_text.delta`, `response.output_text.done`,
  `response.content_part.done`, `response.function_call_arguments.delta|done`,
  `response.output_item.done`, and `response.completed` with `usage` (input_tokens,
  input_tokens_details.cached_tokens, output_tokens, output_tokens_details.reasoning_tokens,
  total_tokens); a scripted failure ends with `response.failed`.
- `POST /v1/chat/completions` — Chat Completions, which Pi uses through an
  `"api": "openai-completions"` provider in its models.json: `chat.completion.chunk` deltas
  (content, then tool_calls with streamed arguments), a finish_reason, a usage chunk
  (prompt_tokens, prompt_tokens_details.cached_tokens, completion_tokens) and `data: [DONE]`.
- `GET /v1/models` lists the scripted model names (clients may refresh their catalogs).

Scripting: `server.script(reply, reply, …)` queues one reply per model request, in order;
when the queue is empty `server.default_reply` answers. A reply is a `Reply` of output
`Text("…")` / `ToolCall("name", {...})` / `Reasoning("…")` items, or an `Error(status, message)`:
  - `Error(status=400…599, message)`: an HTTP error with OpenAI's error body
    (`{"error": {"message", "type", "code"}}`);
  - `Error(status=200, message)`: the stream starts, then fails in-band
    (`response.failed` on the Responses API; an `error` chunk on Chat Completions).
A `ToolCall` whose name is a tuple takes the first name the client actually offered, so a
script survives a CLI renaming its shell tool.

Every request body is recorded (`server.requests`, parsed JSON with `path` and `headers`),
so a test can see which tools the CLI offered the model (`server.offered_tools(i)`).
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Text:
    text: str


@dataclass
class ToolCall:
    """A function call; with a str `arguments`, a custom (freeform) tool call on the Responses
    API, as Codex's apply_patch takes."""

    name: str | tuple[str, ...]
    arguments: dict[str, Any] | str
    call_id: str = ""
    # The Responses API's namespace of a deferred tool (Codex offers MCP tools as
    # "mcp__<server>" namespaces holding each tool by its own name).
    namespace: str = ""


@dataclass
class Reasoning:
    """A reasoning item with a summary (Responses API only; Chat Completions leaves it out)."""

    summary: str


@dataclass
class Error:
    status: int = 400
    message: str = "the fake model refused"
    code: str = "invalid_request_error"


@dataclass
class Usage:
    input_tokens: int = 1200
    cached_input_tokens: int = 200
    output_tokens: int = 50
    reasoning_tokens: int = 0


@dataclass
class Reply:
    items: list[Text | ToolCall | Reasoning] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    error: Error | None = None
    # Seconds between streamed events: lets a test see partial output before the end.
    pace: float = 0.0


def reply(
    *items: Text | ToolCall | Reasoning | Error, usage: Usage | None = None, pace: float = 0.0
) -> Reply:
    errors = [i for i in items if isinstance(i, Error)]
    return Reply(
        items=[i for i in items if not isinstance(i, Error)],
        usage=usage or Usage(),
        error=errors[0] if errors else None,
        pace=pace,
    )


def offered_tool_names(body: dict[str, Any]) -> list[str]:
    """Tool names offered in a Responses or Chat Completions request body."""
    names = []
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        if isinstance(tool.get("function"), dict):  # Chat Completions
            names.append(str(tool["function"].get("name")))
        elif tool.get("name"):  # Responses function tools
            names.append(str(tool["name"]))
        else:  # built-in tools (web_search, local_shell, …) are known by type
            names.append(str(tool.get("type")))
    return names


class FakeOpenAI:
    def __init__(self, model: str = "gpt-5.5"):
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.default_reply = reply(Text("(the fake model has nothing scripted)"))
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeOpenAI:
        fake = self

        class Handler(_Handler):
            server_fake = fake

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake first"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """With the /v1 suffix, as Codex's base_url and Pi's baseUrl expect."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self) -> Reply:
        with self._lock:
            return self._queue.popleft() if self._queue else self.default_reply

    def model_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["path"].endswith(("/responses", "/chat/completions"))]

    def offered_tools(self, index: int = 0) -> list[str]:
        return offered_tool_names(self.model_requests()[index]["body"])

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_fake{next(self._ids):04d}"


class _Handler(BaseHTTPRequestHandler):
    server_fake: FakeOpenAI
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -- plumbing ----------------------------------------------------------------------------

    def _read_body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.headers.get("Content-Encoding") == "zstd":  # pragma: no cover - not seen yet
            raise ValueError("zstd-compressed request bodies are not supported by the fake")
        try:
            return json.loads(raw or b"{}")
        except ValueError:
            return {"_unparsed": raw.decode("utf-8", "replace")}

    def _json(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _start_sse(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _send_event(self, data: dict[str, Any] | str, *, named: bool, pace: float) -> None:
        if isinstance(data, dict):
            payload = json.dumps(data)
            prefix = f"event: {data['type']}\n" if named else ""
        else:
            payload, prefix = data, ""
        self.wfile.write(f"{prefix}data: {payload}\n\n".encode())
        self.wfile.flush()
        if pace:
            time.sleep(pace)

    def _record(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        with fake._lock:
            fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})

    def _http_error(self, error: Error) -> None:
        self._json(
            error.status,
            {"error": {"message": error.message, "type": error.code, "param": None, "code": error.code}},
        )

    # -- routes ------------------------------------------------------------------------------

    def do_GET(self) -> None:
        self._record({})
        if self.path.split("?")[0].rstrip("/").endswith("/models"):
            model = self.server_fake.model
            self._json(
                200, {"object": "list", "data": [{"id": model, "object": "model", "owned_by": "fake"}]}
            )
            return
        self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self) -> None:
        body = self._read_body()
        self._record(body)
        path = self.path.split("?")[0].rstrip("/")
        if path.endswith("/responses"):
            self._responses(body)
        elif path.endswith("/chat/completions"):
            self._chat(body)
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    # -- Responses API (Codex) ---------------------------------------------------------------

    def _responses(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        scripted = fake.next_reply()
        if scripted.error and scripted.error.status != 200:
            self._http_error(scripted.error)
            return
        offered = offered_tool_names(body)
        model = str(body.get("model") or fake.model)
        response_id = fake.new_id("resp")
        pace = scripted.pace
        base = {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "model": model,
            "output": [],
            "usage": None,
        }
        self._start_sse()
        seq = itertools.count()

        def send(event: dict[str, Any]) -> None:
            self._send_event({**event, "sequence_number": next(seq)}, named=True, pace=pace)

        send({"type": "response.created", "response": {**base, "status": "in_progress"}})
        send({"type": "response.in_progress", "response": {**base, "status": "in_progress"}})
        if scripted.error:
            error = {"code": scripted.error.code, "message": scripted.error.message}
            send(
                {
                    "type": "response.failed",
                    "response": {**base, "status": "failed", "error": error},
                }
            )
            return
        output: list[dict[str, Any]] = []
        for index, item in enumerate(scripted.items):
            if isinstance(item, Text):
                done = self._responses_text(send, index, item, fake.new_id("msg"))
            elif isinstance(item, Reasoning):
                done = self._responses_reasoning(send, index, item, fake.new_id("rs"))
            elif isinstance(item.arguments, str):
                done = self._responses_custom_call(send, index, item, offered, fake)
            else:
                done = self._responses_call(send, index, item, offered, fake)
            output.append(done)
        usage = scripted.usage
        send(
            {
                "type": "response.completed",
                "response": {
                    **base,
                    "status": "completed",
                    "output": output,
                    "usage": {
                        "input_tokens": usage.input_tokens,
                        "input_tokens_details": {"cached_tokens": usage.cached_input_tokens},
                        "output_tokens": usage.output_tokens,
                        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
                        "total_tokens": usage.input_tokens + usage.output_tokens,
                    },
                },
            }
        )

    @staticmethod
    def _responses_text(send, index: int, item: Text, item_id: str) -> dict[str, Any]:
        send(
            {
                "type": "response.output_item.added",
                "output_index": index,
                "item": {
                    "id": item_id,
                    "type": "message",
                    "status": "in_progress",
                    "role": "assistant",
                    "content": [],
                },
            }
        )
        part = {"type": "output_text", "text": "", "annotations": []}
        where = {"item_id": item_id, "output_index": index, "content_index": 0}
        send({"type": "response.content_part.added", **where, "part": part})
        words = item.text.split(" ")
        for i, word in enumerate(words):
            delta = word if i == len(words) - 1 else word + " "
            send({"type": "response.output_text.delta", **where, "delta": delta, "logprobs": []})
        send({"type": "response.output_text.done", **where, "text": item.text, "logprobs": []})
        done_part = {**part, "text": item.text}
        send({"type": "response.content_part.done", **where, "part": done_part})
        done = {
            "id": item_id,
            "type": "message",
            "status": "completed",
            "role": "assistant",
            "content": [done_part],
        }
        send({"type": "response.output_item.done", "output_index": index, "item": done})
        return done

    @staticmethod
    def _responses_call(send, index: int, item: ToolCall, offered: list[str], fake: FakeOpenAI):
        name = _pick_name(item.name, offered)
        item_id = fake.new_id("fc")
        call_id = item.call_id or fake.new_id("call")
        arguments = json.dumps(item.arguments)
        started = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "name": name,
            "call_id": call_id,
            "arguments": "",
            **({"namespace": item.namespace} if item.namespace else {}),
        }
        send({"type": "response.output_item.added", "output_index": index, "item": started})
        where = {"item_id": item_id, "output_index": index}
        send({"type": "response.function_call_arguments.delta", **where, "delta": arguments})
        send({"type": "response.function_call_arguments.done", **where, "arguments": arguments})
        done = {**started, "status": "completed", "arguments": arguments}
        send({"type": "response.output_item.done", "output_index": index, "item": done})
        return done

    @staticmethod
    def _responses_reasoning(send, index: int, item: Reasoning, item_id: str) -> dict[str, Any]:
        started = {"id": item_id, "type": "reasoning", "summary": []}
        send({"type": "response.output_item.added", "output_index": index, "item": started})
        where = {"item_id": item_id, "output_index": index, "summary_index": 0}
        part = {"type": "summary_text", "text": ""}
        send({"type": "response.reasoning_summary_part.added", **where, "part": part})
        send({"type": "response.reasoning_summary_text.delta", **where, "delta": item.summary})
        send({"type": "response.reasoning_summary_text.done", **where, "text": item.summary})
        done_part = {**part, "text": item.summary}
        send({"type": "response.reasoning_summary_part.done", **where, "part": done_part})
        done = {**started, "summary": [done_part]}
        send({"type": "response.output_item.done", "output_index": index, "item": done})
        return done

    @staticmethod
    def _responses_custom_call(send, index: int, item: ToolCall, offered: list[str], fake: FakeOpenAI):
        item_id = fake.new_id("ctc")
        started = {
            "id": item_id,
            "type": "custom_tool_call",
            "status": "in_progress",
            "name": _pick_name(item.name, offered),
            "call_id": item.call_id or fake.new_id("call"),
            "input": "",
        }
        send({"type": "response.output_item.added", "output_index": index, "item": started})
        where = {"item_id": item_id, "output_index": index}
        send({"type": "response.custom_tool_call_input.delta", **where, "delta": item.arguments})
        send({"type": "response.custom_tool_call_input.done", **where, "input": item.arguments})
        done = {**started, "status": "completed", "input": item.arguments}
        send({"type": "response.output_item.done", "output_index": index, "item": done})
        return done

    # -- Chat Completions (Pi) ---------------------------------------------------------------

    def _chat(self, body: dict[str, Any]) -> None:
        fake = self.server_fake
        scripted = fake.next_reply()
        if scripted.error and scripted.error.status != 200:
            self._http_error(scripted.error)
            return
        offered = offered_tool_names(body)
        model = str(body.get("model") or fake.model)
        chunk_id = fake.new_id("chatcmpl")
        created = int(time.time())
        self._start_sse()

        def send(choices: list[dict[str, Any]], **extra: Any) -> None:
            chunk = {
                "id": chunk_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
                **extra,
            }
            self._send_event(chunk, named=False, pace=scripted.pace)

        send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        if scripted.error:
            error = {
                "message": scripted.error.message,
                "type": scripted.error.code,
                "code": scripted.error.code,
            }
            self._send_event(json.dumps({"error": error}), named=False, pace=0)
            return
        calls = 0
        for item in scripted.items:
            if isinstance(item, Reasoning):
                continue
            if isinstance(item, Text):
                words = item.text.split(" ")
                for i, word in enumerate(words):
                    piece = word if i == len(words) - 1 else word + " "
                    send([{"index": 0, "delta": {"content": piece}, "finish_reason": None}])
            else:
                call = {
                    "index": calls,
                    "id": item.call_id or fake.new_id("call"),
                    "type": "function",
                    "function": {"name": _pick_name(item.name, offered), "arguments": ""},
                }
                send([{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}])
                arguments = item.arguments if isinstance(item.arguments, str) else json.dumps(item.arguments)
                half = len(arguments) // 2
                for piece in (arguments[:half], arguments[half:]):
                    delta = {"tool_calls": [{"index": calls, "function": {"arguments": piece}}]}
                    send([{"index": 0, "delta": delta, "finish_reason": None}])
                calls += 1
        finish = "tool_calls" if calls else "stop"
        send([{"index": 0, "delta": {}, "finish_reason": finish}])
        usage = scripted.usage
        send(
            [],
            usage={
                "prompt_tokens": usage.input_tokens,
                "completion_tokens": usage.output_tokens,
                "total_tokens": usage.input_tokens + usage.output_tokens,
                "prompt_tokens_details": {"cached_tokens": usage.cached_input_tokens},
                "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
            },
        )
        self._send_event("[DONE]", named=False, pace=0)


def _pick_name(name: str | tuple[str, ...], offered: list[str]) -> str:
    if isinstance(name, str):
        return name
    for candidate in name:
        if candidate in offered:
            return candidate
    return name[0]
