"""`asyncio.run` in a thread of its own, for tests that speak MCP: a browser test run before them in
the same process (Playwright's sync API) may have left an event loop running in the main thread,
where `asyncio.run` refuses to start another."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Coroutine
from typing import Any


def run(coroutine: Coroutine[Any, Any, Any]) -> Any:
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
