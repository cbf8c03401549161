"""The record served over MCP's streamable HTTP from one long-lived process (recall/http.py, issue
41): the same tools and scope rules as over stdio, the turn's pass as the bearer token, asked at
every request; a wake is handed the URL where RECORD_SERVER_URL names a server that answers, its
own stdio server where none is named, and is told in the thread when the named one is down."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time

import httpx
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from motion_runner.models import Kind, Message, TurnStatus
from motion_runner.recall.http import app
from motion_runner.recall.passes import SERVER_NAME, issue_pass, server_config
from motion_runner.runner.turns import enqueue_turn, execute_turn
from tests.factories import TurnFactory
from tests.own_loop import run

from .conftest import post

pytestmark = pytest.mark.django_db(transaction=True)  # the server reads on connections of its own


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """`app()` served by uvicorn on a thread of this process, as `manage.py serve_record` serves it."""

    def __init__(self) -> None:
        port = free_port()
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.server = uvicorn.Server(uvicorn.Config(app(), host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.02)
        assert self.server.started

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)


@pytest.fixture
def served(db):
    served = Served()
    yield served
    served.stop()


@pytest.fixture
def record_url(served):
    return served.url


def transport(url: str, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))


def call(url: str, token: str | None, tool: str, arguments: dict):
    async def talk():
        async with Client(transport(url, token), read_timeout_seconds=60) as client:
            return await client.call_tool(tool, arguments)

    return run(talk())


def found_texts(result) -> list[str]:
    assert not result.is_error, result.content[0].text
    return [line["text"] for line in json.loads(result.content[0].text)["results"]]


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def raw_post(url: str, token: str | None, body: dict = INITIALIZE) -> httpx.Response:
    """A request as any client sends it (an initialize, first, by default)."""
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(url, json=body, headers=headers, timeout=30)


# --- answers with a running turn's pass, scoped by that turn ----------------------------------


def test_search_over_http_finds_the_woken_motions_post_and_nothing_out_of_reach(
    record_url, launch, rooms, running_turn
):
    post(launch, "The deploy key rotates on Tuesdays.")
    post(rooms["elsewhere"], "deploy plan of a Motion @magent is not in")
    post(rooms["side"], "deploy notes Bo may not read")
    result = call(record_url, issue_pass(running_turn), "search", {"query": "deploy"})
    assert found_texts(result) == ["The deploy key rotates on Tuesdays."]


def test_the_same_three_tools_are_listed_over_http_as_over_stdio(record_url, running_turn):
    from motion_runner.recall.server import build

    async def listed(server):
        async with Client(server) as client:
            return {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}

    over_http = run(listed(transport(record_url, issue_pass(running_turn))))
    assert over_http == run(listed(build("mrp_unused")))
    assert sorted(over_http) == ["read", "remember", "search"]


def test_the_server_offers_its_tools_and_no_prompts_resources_or_listen_stream(record_url, running_turn):
    """What a harness's connect asks for follows what is offered: offered only tools, Claude Code
    lists only them and opens no held `subscriptions/listen` stream (a round trip at every start)."""

    token = issue_pass(running_turn)

    async def offered():
        async with Client(transport(record_url, token)) as client:
            return client.server_capabilities

    capabilities = run(offered())
    assert capabilities.tools is not None and not capabilities.tools.list_changed
    assert (capabilities.prompts, capabilities.resources) == (None, None)


def test_each_call_answers_as_the_turn_whose_pass_it_carries(record_url, launch, rooms, magent):
    """Two turns at once on the one server: a note lands in the Motion of the pass's turn."""
    rooms["side"].agents.add(magent)
    here = TurnFactory(motion=launch, agent=magent, status=TurnStatus.RUNNING, mode="full")
    there = TurnFactory(motion=rooms["side"], agent=magent, status=TurnStatus.RUNNING, mode="full")
    here_pass, there_pass = issue_pass(here), issue_pass(there)
    call(record_url, there_pass, "remember", {"text": "kept on the side"})
    call(record_url, here_pass, "remember", {"text": "kept in the launch"})
    notes = dict(Message.objects.filter(kind=Kind.NOTE).values_list("text", "motion_id"))
    assert notes == {"kept on the side": "side-room", "kept in the launch": "launch"}


# --- refused without a running turn's pass, at every request ----------------------------------


def test_a_request_without_a_pass_is_refused(record_url, running_turn):
    answer = raw_post(record_url, None)
    assert answer.status_code == 401 and "running" in answer.json()["error"]


def test_a_tool_call_without_a_pass_is_the_tools_error_and_keeps_nothing(record_url, running_turn):
    remember = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "remember", "arguments": {"text": "a note nobody may keep"}},
    }
    for token in (None, "mrp_guessed"):
        answer = raw_post(record_url, token, remember)
        assert answer.status_code == 200 and answer.json()["result"]["isError"] is True
        assert "only while the turn" in answer.json()["result"]["content"][0]["text"]
    assert not Message.objects.filter(kind=Kind.NOTE).exists()


def test_a_guessed_pass_is_refused(record_url, running_turn):
    issue_pass(running_turn)
    assert raw_post(record_url, "mrp_guessed").status_code == 401


def test_the_pass_of_a_turn_that_ended_is_refused(record_url, running_turn):
    token = issue_pass(running_turn)
    assert raw_post(record_url, token).status_code == 200
    running_turn.status = TurnStatus.FINISHED
    running_turn.save(update_fields=["status"])
    assert raw_post(record_url, token).status_code == 401


def test_the_pass_of_a_turn_not_yet_started_is_refused(record_url, launch, magent):
    queued = TurnFactory(motion=launch, agent=magent, status=TurnStatus.QUEUED, mode="look")
    assert raw_post(record_url, issue_pass(queued)).status_code == 401


def test_a_pass_replaced_by_the_turns_next_launch_is_refused(record_url, running_turn):
    earlier = issue_pass(running_turn)
    issue_pass(running_turn)
    assert raw_post(record_url, earlier).status_code == 401


def test_a_call_after_the_turn_ended_is_refused_on_the_connection_it_opened(record_url, launch, running_turn):
    post(launch, "The deploy key rotates on Tuesdays.")
    token = issue_pass(running_turn)

    async def talk():
        async with Client(transport(record_url, token), read_timeout_seconds=60) as client:
            before = await client.call_tool("search", {"query": "deploy"})
            await asyncio.to_thread(end, running_turn)
            return before, await client.call_tool("search", {"query": "deploy"})

    before, after = run(talk())
    assert found_texts(before) == ["The deploy key rotates on Tuesdays."]
    # The tool's error, which the agent and the thread read, not a bare 401 its harness hides.
    assert after.is_error and "only while the turn" in after.content[0].text


def end(turn) -> None:
    turn.status = TurnStatus.FINISHED
    turn.save(update_fields=["status"])


def test_health_answers_without_a_pass_and_holds_no_record(record_url):
    answer = httpx.get(record_url.replace("/mcp", "/health"), timeout=10)
    assert answer.status_code == 200 and answer.json() == {"server": SERVER_NAME, "ok": True}


# --- what a wake is handed -------------------------------------------------------------------


def test_a_wake_is_handed_the_url_and_its_pass_as_bearer_where_a_server_is_named(
    record_url, running_turn, settings
):
    settings.RECORD_SERVER_URL = record_url
    config, files = server_config(running_turn)
    assert files == ()
    assert (config["type"], config["url"]) == ("http", record_url)
    token = config["headers"]["Authorization"].removeprefix("Bearer ")
    assert raw_post(record_url, token).status_code == 200


def test_without_a_named_server_a_wake_starts_its_own_over_stdio(running_turn, settings):
    settings.RECORD_SERVER_URL = ""
    config, files = server_config(running_turn)
    try:
        assert config["args"][:2] == ["-m", "motion_runner.recall"] and "type" not in config
        assert len(files) == 1
    finally:
        for path in files:
            path.unlink()


def test_a_named_server_that_does_not_answer_is_said_in_the_thread_and_stdio_serves(running_turn, settings):
    settings.RECORD_SERVER_URL = f"http://127.0.0.1:{free_port()}/mcp"
    config, files = server_config(running_turn)
    try:
        assert config["args"][:2] == ["-m", "motion_runner.recall"]
    finally:
        for path in files:
            path.unlink()
    (said,) = Message.objects.filter(motion=running_turn.motion, turn=running_turn, kind=Kind.WAKE)
    assert "record server" in said.text and "did not answer" in said.text
    assert settings.RECORD_SERVER_URL in said.text


def test_a_port_that_takes_connections_but_never_answers_is_said_unreachable(running_turn, settings):
    # A hung server (or another process on its port): a connection is taken, no health answer.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        settings.RECORD_SERVER_URL = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        config, files = server_config(running_turn)
    for path in files:
        path.unlink()
    assert config.get("type") != "http"
    (said,) = Message.objects.filter(turn=running_turn, kind=Kind.WAKE)
    assert "did not answer" in said.text


# --- a server that stops answering mid-turn --------------------------------------------------

SESSION = "7d0c6c52-4a4e-4d55-9d0e-5b0b4f0c2a11"
SEARCH = f"mcp__{SERVER_NAME}__search"


def record_calls_failing(tmp_path, calls: int) -> str:
    """Claude Code's lines for `calls` record searches, each answered by the harness's tool error
    (as when its MCP server is gone), then its reply and result."""
    lines: list[dict] = [{"type": "system", "subtype": "init", "session_id": SESSION, "tools": [SEARCH]}]
    for n in range(calls):
        lines.append(
            {
                "type": "assistant",
                "session_id": SESSION,
                "uuid": f"0b7e1c55-0c55-4c1c-9f55-1d5f0d1e2{n:03d}",
                "message": {
                    "id": f"msg_{n}",
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": f"toolu_{n}", "name": SEARCH, "input": {"query": "x"}}
                    ],
                },
            }
        )
        lines.append(
            {
                "type": "user",
                "session_id": SESSION,
                "uuid": f"1b7e1c55-0c55-4c1c-9f55-1d5f0d1e2{n:03d}",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": f"toolu_{n}",
                            "content": "fetch failed",
                            "is_error": True,
                        }
                    ],
                },
            }
        )
    lines.append(
        {
            "type": "result",
            "subtype": "success",
            "is_error": False,
            "session_id": SESSION,
            "total_cost_usd": 0.01,
            "usage": {"input_tokens": 10, "output_tokens": 5},
            "uuid": "0b7e1c55-0c55-4c1c-9f55-1d5f0d1e2fff",
        }
    )
    path = tmp_path / "lines.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return str(path)


@pytest.fixture
def harnessed(launch, magent, tmp_path, monkeypatch, settings, served):
    """@magent's Claude Code is tests/fakes/fake_harness.py playing `record_calls_failing`, handed
    the record server `served`; `then(after_launch)` runs once its launch is built (the server's
    health checked, its URL handed), before the harness prints."""
    from motion_runner.harnesses import claude_code
    from tests.paths import TESTS

    settings.RECORD_SERVER_URL = served.url
    magent.harness, magent.binary = "claude-code", sys.executable
    magent.env = {"FAKE_HARNESS_PLAN": json.dumps({"lines": record_calls_failing(tmp_path, calls=2)})}
    magent.save()
    after: list = []
    real = claude_code.ClaudeCodeAdapter.build_launch

    def build_launch(self, turn, *, resume_session, policy):
        spec = real(self, turn, resume_session=resume_session, policy=policy)
        spec.argv = [spec.argv[0], str(TESTS / "fakes" / "fake_harness.py"), *spec.argv[1:]]
        for then in after:
            then()
        return spec

    monkeypatch.setattr(claude_code.ClaudeCodeAdapter, "build_launch", build_launch)
    return after


def record_lines(turn) -> list[str]:
    return list(Message.objects.filter(turn=turn, kind=Kind.WAKE).values_list("text", flat=True))


def test_a_record_server_gone_mid_turn_is_said_once_in_the_thread(launch, magent, served, harnessed):
    harnessed.append(served.stop)  # handed to the turn, then gone before its first call
    queued = enqueue_turn(launch, magent, "Anything new?", mode="look", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    (said,) = record_lines(turn)  # two failed calls, one line
    assert "stopped answering" in said and served.url in said


def test_a_record_tool_error_from_a_server_that_answers_says_nothing_more(launch, magent, harnessed):
    queued = enqueue_turn(launch, magent, "Anything new?", mode="look", dispatch=False)

    turn = execute_turn(queued.pk)

    assert turn.status == TurnStatus.FINISHED, turn.error
    assert record_lines(turn) == []
    assert Message.objects.filter(turn=turn, kind=Kind.TOOL_RESULT, is_error=True).count() == 2
