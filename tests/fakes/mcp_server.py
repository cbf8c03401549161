"""A tiny MCP server speaking JSON-RPC 2.0 over stdio (newline-delimited, as MCP's stdio
transport does), for the end-to-end tests of what a wake's harness offers the model.

    python tests/fakes/mcp_server.py --name pickipedia --tools get-page,update-page --log calls.jsonl

It answers `initialize` (echoing the client's protocolVersion), `ping`, `tools/list` (each
named tool with a one-string-argument schema) and `tools/call` (appends the call to --log, so a
test sees whether a tool was really reached, and answers with a text block); notifications get
no answer; any other method is a JSON-RPC "method not found" error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time


def tool(name: str) -> dict:
    return {
        "name": name,
        "description": f"The fake {name}.",
        "inputSchema": {
            "type": "object",
            "properties": {"title": {"type": "string", "description": "A page title."}},
        },
    }


def answer(request: dict, args: argparse.Namespace) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if "id" not in request:
        return None  # a notification (notifications/initialized, cancelled…)
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion") or "2025-06-18",
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": args.name, "version": "0.0.1"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [tool(name) for name in args.tools]}
    elif method == "tools/call":
        name = params.get("name")
        if args.log:
            with open(args.log, "a") as log:
                log.write(
                    json.dumps({"server": args.name, "tool": name, "arguments": params.get("arguments")})
                    + "\n"
                )
        if name not in args.tools:
            return {
                "jsonrpc": "2.0",
                "id": request["id"],
                "error": {"code": -32602, "message": f"Unknown tool: {name}"},
            }
        result = {"content": [{"type": "text", "text": f"{args.name} {name} done"}], "isError": False}
    else:
        return {
            "jsonrpc": "2.0",
            "id": request["id"],
            "error": {"code": -32601, "message": f"Method not found: {method}"},
        }
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--tools", required=True, type=lambda s: [t for t in s.split(",") if t])
    parser.add_argument("--log", default="")
    args = parser.parse_args()
    if args.log:
        with open(args.log, "a") as log:
            log.write(json.dumps({"server": args.name, "started": time.time()}) + "\n")
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            request = json.loads(line)
        except ValueError:
            reply = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        else:
            reply = answer(request, args) if isinstance(request, dict) else None
        if reply is not None:
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
