"""The fake Anthropic Messages API answers like the real one (the real CLI is its main client:
see test_e2e_claude.py; these pin the parts other helpers script directly)."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from tests.fakes.anthropic_api import (
    ApiError,
    FakeAnthropic,
    Hang,
    Reply,
    StreamError,
    Text,
    ToolUse,
    Usage,
)

HEADERS = {"x-api-key": "sk-ant-fake-key", "anthropic-version": "2023-06-01"}


def post(api: FakeAnthropic, body: dict, path: str = "/v1/messages") -> httpx.Response:
    return httpx.post(f"{api.url}{path}", json=body, headers=HEADERS, timeout=5)


def sse_events(text: str) -> list[tuple[str, dict]]:
    events = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def body(stream: bool = False, model: str = "claude-haiku-4-5", text: str = "Is this worth a wake?") -> dict:
    return {
        "model": model,
        "max_tokens": 16,
        "stream": stream,
        "messages": [{"role": "user", "content": text}],
    }


def test_a_non_streaming_call_gets_one_message_object(fake_anthropic):
    fake_anthropic.script(Reply(Text("PASS"), usage=Usage(input_tokens=30, output_tokens=1)))

    answer = post(fake_anthropic, body()).json()

    assert answer["type"] == "message"
    assert answer["model"] == "claude-haiku-4-5"
    assert answer["content"] == [{"type": "text", "text": "PASS"}]
    assert answer["stop_reason"] == "end_turn"
    assert answer["usage"]["input_tokens"] == 30
    assert answer["id"].startswith("msg_")


def test_a_streaming_call_gets_the_real_event_sequence(fake_anthropic):
    fake_anthropic.script(Reply(Text("Reading."), ToolUse("Read", {"file_path": "/w/README.md"})))

    events = sse_events(post(fake_anthropic, body(stream=True)).text)

    names = [name for name, _ in events]
    assert names[:2] == ["message_start", "ping"]
    assert names[-2:] == ["message_delta", "message_stop"]
    text = "".join(d["delta"]["text"] for n, d in events if n == "content_block_delta" and d["index"] == 0)
    tool_json = "".join(
        d["delta"]["partial_json"] for n, d in events if n == "content_block_delta" and d["index"] == 1
    )
    assert text == "Reading."
    assert json.loads(tool_json) == {"file_path": "/w/README.md"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"


def test_errors_come_with_the_real_status_and_body(fake_anthropic):
    fake_anthropic.script(ApiError.overloaded())

    response = post(fake_anthropic, body())

    assert response.status_code == 529
    assert response.json()["error"] == {"type": "overloaded_error", "message": "Overloaded"}
    assert response.headers["request-id"] == response.json()["request_id"]


def test_a_stream_can_fail_midway_with_an_error_event(fake_anthropic):
    fake_anthropic.script(StreamError(Reply(Text("Half"))))

    events = sse_events(post(fake_anthropic, body(stream=True)).text)

    assert events[-1][0] == "error"
    assert events[-1][1]["error"]["type"] == "overloaded_error"


def test_a_route_answers_side_calls_without_eating_the_script(fake_anthropic):
    fake_anthropic.script(Reply(Text("the main answer")))
    fake_anthropic.route(lambda r: r.model.startswith("claude-haiku"), Reply(Text("DISMISS")))

    screen = post(fake_anthropic, body(model="claude-haiku-4-5")).json()
    main = post(fake_anthropic, body(model="claude-opus-4-5")).json()

    assert screen["content"][0]["text"] == "DISMISS"
    assert main["content"][0]["text"] == "the main answer"
    assert fake_anthropic.pending == 0


def test_a_route_can_compute_its_answer_from_the_request(fake_anthropic):
    fake_anthropic.route(lambda r: True, lambda r: Reply(Text(r.last_user_text().upper())))

    answer = post(fake_anthropic, body(text="shout this")).json()

    assert answer["content"][0]["text"] == "SHOUT THIS"


def test_an_empty_script_without_a_default_is_a_500_so_extra_calls_show(fake_anthropic):
    fake_anthropic.default = None

    assert post(fake_anthropic, body()).status_code == 500


def test_every_request_is_recorded_with_its_body_and_offered_tools(fake_anthropic):
    request_body = {
        **body(),
        "tools": [{"name": "Read", "input_schema": {}}, {"name": "Grep", "input_schema": {}}],
    }

    post(fake_anthropic, request_body)
    post(fake_anthropic, body(), path="/v1/messages/count_tokens")

    first, second = fake_anthropic.requests
    assert first.body == request_body
    assert first.tool_names == ["Read", "Grep"]
    assert first.headers["x-api-key"] == "sk-ant-fake-key"
    assert second.path == "/v1/messages/count_tokens"
    assert fake_anthropic.message_requests() == [first]


def test_count_tokens_answers_a_count(fake_anthropic):
    assert post(fake_anthropic, body(), path="/v1/messages/count_tokens").json()["input_tokens"] > 0


def test_an_unknown_endpoint_is_a_404_and_is_recorded(fake_anthropic):
    response = httpx.get(f"{fake_anthropic.url}/v1/models", timeout=5)

    assert response.status_code == 404
    assert response.json()["error"]["type"] == "not_found_error"
    assert fake_anthropic.requests[0].path == "/v1/models"


def test_a_hang_holds_the_request_until_the_client_gives_up():
    with FakeAnthropic(Hang()) as api:
        with pytest.raises(httpx.ReadTimeout):
            httpx.post(f"{api.url}/v1/messages", json=body(), headers=HEADERS, timeout=0.5)
        assert api.requests  # it reached the fake, which held it: the client gave up, not the server


def test_stopping_the_server_releases_a_hung_request():
    api = FakeAnthropic(Hang()).start()
    outcome: list[str] = []

    def call():
        try:
            httpx.post(f"{api.url}/v1/messages", json=body(), headers=HEADERS, timeout=10)
            outcome.append("answered")
        except httpx.HTTPError as exc:
            outcome.append(type(exc).__name__)

    thread = threading.Thread(target=call)
    thread.start()
    # The request is held by the fake before it stops (waited for, not slept: a slow machine
    # would otherwise stop the server before the request came, and prove nothing).
    deadline = time.monotonic() + 60
    while not api.requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert api.requests
    api.stop()
    thread.join(60)

    assert not thread.is_alive()
    assert outcome and outcome[0] != "answered"
