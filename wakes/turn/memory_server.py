"""Which memory server a wake gets: the deployment's own (memory-lane's), where it names one,
else the project's record server (motion_runner/recall), made for each turn with its pass."""

from __future__ import annotations

from django.conf import settings

from motion_runner.models import Harness

# memory-lane's memory server: the deployment's own where it names it (WAKE_MEMORY_SERVERS, or a
# server of this name in WAKE_READ_MCP_SERVERS).
MEMORY_SERVERS: tuple[str, ...] = ("magenta-memory-v2",)
# The harnesses the record server is handed to: Claude Code and Codex in their generated MCP
# config, Pi (which has no MCP client) through the adapter's extension
# (motion_runner/harnesses/pi_record_extension.ts).
RECORD_HARNESSES: tuple[str, ...] = (Harness.CLAUDE_CODE, Harness.CODEX, Harness.PI)


def own_memory_servers(read_servers: dict[str, dict]) -> tuple[str, ...]:
    """The memory servers the deployment names itself; none, and the record server serves."""
    named = getattr(settings, "WAKE_MEMORY_SERVERS", None)
    if named is not None:
        return tuple(named)
    return tuple(name for name in MEMORY_SERVERS if name in read_servers)


def uses_record_server(harness: str | None = None) -> bool:
    """Whether a wake (of an agent on `harness`, when given) gets the record server."""
    if own_memory_servers(dict(getattr(settings, "WAKE_READ_MCP_SERVERS", {}))):
        return False
    return harness is None or harness in RECORD_HARNESSES
