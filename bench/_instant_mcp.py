"""An MCP endpoint that answers at once: each method's first request goes on to the record server
(`upstream`) and its answer is kept; every later request of that method is answered from what was
kept, with its own id, no SDK, no database and no pass asked. The floor any record server could
reach: bench/turn_start.py's `instant` wakes, beside which the HTTP record's own share of the
start shows (what is left over the wake without the record is the harness's own MCP connect).

Bench only (it answers without a pass): `python bench/_instant_mcp.py PORT UPSTREAM_URL`.
"""

from __future__ import annotations

import json
import sys
import urllib.request

import uvicorn

KEPT: dict[str, tuple[int, str, bytes]] = {}  # method (or path) -> status, content type, body


def _forward(url: str, body: bytes, headers: dict[str, str], method: str) -> tuple[int, str, bytes]:
    request = urllib.request.Request(url, data=body or None, headers=headers, method=method)
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.status, answer.headers.get("content-type", "application/json"), answer.read()


def make_app(upstream: str):
    base = upstream.rsplit("/", 1)[0]

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        body, more = b"", True
        while more:
            event = await receive()
            body += event.get("body", b"")
            more = event.get("more_body", False)
        headers = {k.decode(): v.decode() for k, v in scope["headers"] if k.decode() != "host"}
        message = json.loads(body) if body else {}
        if "method" in message and "id" not in message:  # a notification: nothing to answer
            status, kind, payload = 202, "application/json", b""
        else:
            key = message.get("method") or scope["path"]
            if key not in KEPT:
                KEPT[key] = _forward(base + scope["path"], body, headers, scope["method"])
            status, kind, payload = KEPT[key]
            if "id" in message:
                kept = json.loads(payload)
                kept["id"] = message["id"]
                payload = json.dumps(kept).encode()
        await send(
            {"type": "http.response.start", "status": status, "headers": [(b"content-type", kind.encode())]}
        )
        await send({"type": "http.response.body", "body": payload})

    return app


if __name__ == "__main__":
    uvicorn.run(make_app(sys.argv[2]), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
