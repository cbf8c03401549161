"""The record server's tools (the official `mcp` SDK): over stdio, started by the harness from the
wake's generated config with the turn's pass in its environment (recall/passes.py); or over
streamable HTTP from one long-lived process (recall/http.py, `manage.py serve_record`), each call
carrying its turn's pass as its bearer token.

Over stdio it refuses to start without a running turn's pass; either way it asks again at every
call (a turn may end while its harness lingers). Each call is a tool step in the turn's record: the harness streams the
call and its result like any other tool's, and the ingest redacts them as it stores them; the
answers here are redacted already (recall/record.py).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable

from django.db import close_old_connections, connections

try:  # the tools' annotations name it (the SDK reads them when it serves)
    from mcp.server.mcpserver import Context
except ImportError:  # a host's older SDK (memory-lane pins mcp<2) never serves this record
    Context = None

from ..models import Turn
from . import record
from .passes import PASS_VARIABLE, SERVER_NAME, running_turn_for

INSTRUCTIONS = (
    "Your record: the conversations of the Motions you belong to that everyone in this thread may "
    "read. `search` finds posts (newest first), `read` shows one in its context or a Motion from a "
    "cursor, `remember` keeps a note in this Motion. Cite what you use by its link."
)


class Refused(RuntimeError):
    """No running turn holds this server's pass."""


def live_turn(token: str | None) -> Turn:
    close_old_connections()  # a long-lived process: never a connection the database has dropped
    turn = running_turn_for(token)
    if turn is None:
        raise Refused("the record server answers only while the turn that started it runs")
    return turn


def answer(token: str | None, work: Callable[[Turn], dict]) -> str:
    from mcp.server.mcpserver.exceptions import ToolError

    try:
        return json.dumps(work(live_turn(token)), ensure_ascii=False, indent=1)
    except (Refused, record.RecordError) as exc:
        raise ToolError(str(exc)) from None
    finally:
        # Calls are few and far apart, each on a worker thread: no idle connection is kept.
        connections.close_all()


BEARER = "bearer "


def bearer(headers) -> str | None:
    """The pass an HTTP request carries (`Authorization: Bearer <pass>`), or None."""
    value = (headers or {}).get("authorization") or ""
    if not value.lower().startswith(BEARER):
        return None
    return value[len(BEARER) :].strip() or None


# The SDK's methods the record does not serve (it has no prompts and no resources).
UNOFFERED = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
)


def build(token: str | None = None):
    """The server with its three tools. Given `token` (stdio: one turn's process), every call is
    that turn's; without it (HTTP: one process for every turn), each call's own bearer token."""
    # The SDK is the standalone install's (requirements.txt): a host that names its own memory
    # server (memory-lane) never starts this one, and its install need not carry it.
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    # Its tools never change while a turn runs: no `subscriptions/listen` stream to offer. Offered,
    # Claude Code opens one at connect and waits for its answer before it lists the tools (a
    # round trip more on every turn's start) and holds it until it exits.
    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS, subscriptions=False)
    # Nor prompts or resources (the SDK serves empty lists by default): unoffered, a harness asks
    # only for the tools at connect, not three lists each checking the pass (issue 41). MCPServer
    # registers its (empty) prompt and resource handlers always; it has no switch to leave them out.
    for method in UNOFFERED:
        server._lowlevel_server._request_handlers.pop(method, None)
    # What each tool does, said to the harness: Codex asks approval for an MCP tool that may write
    # destructively or reach outside (the defaults when unsaid), and a look-only turn's approval
    # policy is "never", so unannotated its every record call was refused.
    reads = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    notes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)

    def pass_of(ctx: Context) -> str | None:
        return token if token is not None else bearer(ctx.headers)

    @server.tool(
        description="Full-text search over your record; every word must match. Newest first. "
        "author: whose posts, the whole name in any case.",
        annotations=reads,
    )
    def search(
        query: str,
        motion: str = "",
        author: str = "",
        kind: str = "",
        since: str = "",
        until: str = "",
        limit: int = 10,
        ctx: Context = None,
    ) -> str:
        filters = record.SearchFilters(
            motion=motion, author=author, kind=kind, since=since, until=until, limit=limit
        )
        return answer(pass_of(ctx), lambda turn: record.search(turn, query, filters))

    @server.tool(
        description="A message with the posts around it (message_id), or a Motion's posts after a time (motion, after).",
        annotations=reads,
    )
    def read(
        message_id: str = "", motion: str = "", after: str = "", around: int = 5, ctx: Context = None
    ) -> str:
        return answer(
            pass_of(ctx),
            lambda turn: record.read(turn, message_id=message_id, motion=motion, after=after, around=around),
        )

    @server.tool(
        description="Keep a note in your own record of this Motion (shown in the thread as your note).",
        annotations=notes,
    )
    def remember(text: str, ctx: Context = None) -> str:
        return answer(pass_of(ctx), lambda turn: record.remember(turn, text))

    return server


def serve() -> int:
    """Run over stdio until the harness closes it; 2 at once without a running turn's pass."""
    token = os.environ.get(PASS_VARIABLE)
    try:
        live_turn(token)
    except Refused as exc:
        print(f"{SERVER_NAME}: refused: {exc}", file=sys.stderr)
        return 2
    build(token).run("stdio")
    return 0
