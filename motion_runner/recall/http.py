"""The record served over MCP's streamable HTTP from one long-lived process (`manage.py
serve_record`), so a turn's start costs no Django boot and no SDK import (issue 41): its harness
connects to a server that is up already, with the turn's pass as its bearer token.

The same tools and scope rules as over stdio (recall/server.py, recall/record.py), asked at every
request: this gate refuses any request to the MCP path whose bearer token is no running turn's
pass (401, before the SDK sees it: no pass, a guessed one, a turn not started or ended), and each
tool call asks again for its own turn. A tool call without a good pass is handed on to its tool, which
refuses it as the tool's error, as over stdio (the agent and the thread read why), never as a
bare 401 its harness would hide. Stateless (no session kept between requests) and answered
as JSON: nothing of a turn outlives its request here.

`/health` answers without a pass (no record in it): what a worker probes at a turn's start.
"""

from __future__ import annotations

import json

import anyio.to_thread
from django.db import close_old_connections, connections

from .passes import SERVER_NAME, running_turn_for
from .server import bearer, build

MCP_PATH = "/mcp"
HEALTH_PATH = "/health"
REFUSED = "the record answers only with the pass of a turn that is running"


def _holds_a_running_turn(token: str | None) -> bool:
    close_old_connections()
    try:
        return running_turn_for(token) is not None
    finally:
        connections.close_all()  # each request on a worker thread: no idle connection kept


async def _say(send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": payload})


def _headers(scope) -> dict[str, str]:
    return {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}


async def _body(receive) -> bytes:
    chunks, more = [], True
    while more:
        event = await receive()
        chunks.append(event.get("body", b""))
        more = event.get("more_body", False) and sum(map(len, chunks)) < MOST_BODY_BYTES
    return b"".join(chunks)


MOST_BODY_BYTES = 1 << 20


async def _refuse(scope, receive, send, inner) -> None:
    """401; but a tool call (a harness mid-turn whose turn ended) goes on to its tool, which
    refuses it itself (server.answer) as the tool's error, as over stdio."""
    if scope.get("method") == "POST":
        body = await _body(receive)
        try:
            message = json.loads(body)
        except ValueError:
            message = None
        if isinstance(message, dict) and message.get("method") == "tools/call":
            sent = False

            async def replay():
                nonlocal sent
                if sent:
                    return await receive()
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}

            return await inner(scope, replay, send)
    return await _say(send, 401, {"error": REFUSED}, [(b"www-authenticate", b'Bearer realm="motion-record"')])


def app(*, allowed_hosts: list[str] | None = None):
    """The ASGI app: the pass gate in front of the SDK's streamable HTTP app. `allowed_hosts`:
    the Host headers it answers (DNS-rebinding protection); None, any (the SDK's default off
    localhost: a compose network's service name)."""
    from mcp.server.transport_security import TransportSecuritySettings

    security = (
        TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts)
        if allowed_hosts
        else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    inner = build().streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
    )

    async def gate(scope, receive, send):
        if scope["type"] != "http":  # the lifespan: the SDK's session manager starts there
            return await inner(scope, receive, send)
        path = scope.get("path", "")
        if path == HEALTH_PATH:
            return await _say(send, 200, {"server": SERVER_NAME, "ok": True})
        if path.rstrip("/") == MCP_PATH:
            token = bearer(_headers(scope))
            if not await anyio.to_thread.run_sync(_holds_a_running_turn, token):
                return await _refuse(scope, receive, send, inner)
        return await inner(scope, receive, send)

    return gate
