"""A MediaWiki page's address from its api.php: used by the watchlist's wiki watch and by the
wakes' wiki reply, so it lives below both."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def index_url(api: str) -> str:
    return api[: -len("api.php")] + "index.php" if api.endswith("api.php") else api


def page_url(api: str, title: str, **params: Any) -> str:
    query = "&".join(f"{k}={v}" for k, v in params.items())
    url = f"{index_url(api)}?title={quote(title.replace(' ', '_'), safe=':/')}"
    return f"{url}&{query}" if query else url
