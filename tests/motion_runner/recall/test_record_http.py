"""The record served over MCP's streamable HTTP from one long-lived process (recall/http.py, issue
41): the same tools and scope rules as over stdio, the turn's pass as the bearer token, asked at
every request; a wake is handed the URL where RECORD_SERVER_URL names a server that answers, its
own stdio server where none is named, and is told in the thread when the named one is down."""

from __future__ import annotations

import asyncio
import json
import socket
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
from tests.factories import TurnFactory
from tests.own_loop import run

from .conftest import post

pytestmark = pytest.mark.django_db(transaction=True)  # the server reads on connections of its own


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def record_url(db):
    """`app()` served by uvicorn on a thread of this process, as `manage.py serve_record` serves it."""
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)


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
