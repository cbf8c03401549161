"""The watchlist's settings, each with a default (see motion_runner/conf.py for how they are read)."""

from __future__ import annotations

from typing import Any

from motion_runner.conf import AppSettings
from wakes.conf import WIKI_DEFAULTS

DEFAULTS: dict[str, Any] = {
    **WIKI_DEFAULTS,
    "WATCH_CHECK_EVERY_SECONDS": 90.0,
    "WATCH_MIN_INTERVAL_SECONDS": 90,
    "WATCH_CYCLE_BUDGET_SECONDS": 75.0,
    "WATCH_CLAIM_LEASE_SECONDS": 300,
    "WATCH_MAX_PER_CYCLE": 5000,
    "WATCH_MAX_WORKERS": 8,
    "WATCH_FAILURES_BEFORE_NOTICE": 3,
    "WATCH_BACKOFF_MAX_SECONDS": 3600,
    "WATCH_GITHUB_API": "https://api.github.com",
    "WATCH_GITHUB_TOKEN": "",
    "WATCH_ETH_RPC_URL": "https://ethereum-rpc.publicnode.com",
    "WATCH_ETH_MAX_RANGE": 5000,
    "WATCH_ETH_MAX_CHUNKS": 20,
    "WATCH_ETH_EXPLORER": "https://etherscan.io/tx/{tx}",
}

app_settings = AppSettings("watchlist", DEFAULTS)
