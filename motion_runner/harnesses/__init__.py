"""Harness adapters, one module per harness, behind HarnessAdapter and this registry.

Each adapter turns a turn and the ToolPolicy the runner hands it into a command line (policy in,
argv out: policy.py declares the value, claude_code_command.py spells it for Claude Code), and
parses its harness's stream-json lines into Events. The package imports lib/, the app's conf and
the price table; never the models, the hooks (signals.py) or wakes (import-linter holds it to
that): what a turn may use is decided above it and handed down.
"""

from __future__ import annotations

from .base import Event, EventKind, HarnessAdapter, HarnessError, LaunchSpec, StreamParser

HARNESSES: dict[str, HarnessAdapter] = {}


def register(adapter_class: type[HarnessAdapter]) -> type[HarnessAdapter]:
    HARNESSES[adapter_class.harness] = adapter_class()
    return adapter_class


def get_adapter(harness: str) -> HarnessAdapter:
    try:
        return HARNESSES[harness]
    except KeyError:
        raise HarnessError(f"unknown harness {harness!r}", permanent=True) from None


from . import claude_code, codex, pi  # noqa: E402,F401  (each registers itself)

__all__ = [
    "HARNESSES",
    "Event",
    "EventKind",
    "HarnessAdapter",
    "HarnessError",
    "LaunchSpec",
    "StreamParser",
    "get_adapter",
    "register",
]
