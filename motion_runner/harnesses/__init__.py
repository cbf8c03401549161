"""Harness adapters, one module per harness, behind HarnessAdapter and this registry."""

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
