#!/usr/bin/env python3
"""The project's redaction on the held-out corpus (tests/motion_runner/ingest/heldout/: secret
shapes from gitleaks' and detect-secrets' rule lists and everyday tool output, written by someone
other than the rules' author; ordinary lines of real text from this machine), per place a secret
can reach the record through the write path:

- posts: an agent's words, an assistant `text` block;
- tool results: a `tool_result` block's output (a user line);
- thinking steps: an assistant `thinking` block.

Each is parsed by ClaudeCodeParser into its Event and made a Message exactly as EventWriter does
(text, raw), then fitted by `ingest.fit.fit_message` with a fresh Redactor (what every insert
does). A secret is kept out when no piece of it (the whole, or any 12 characters of it, for a key
block each line of its body) is left in the Message's text or any string of its raw JSON. An
ordinary line is touched when its Message's text differs from it. No database.

  .venv/bin/python bench/redaction_heldout.py [--ordinary N]   (N: first N lines only)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
HELDOUT = ROOT / "tests" / "motion_runner" / "ingest" / "heldout"
PLACES = ("posts", "tool results", "thinking steps")
WINDOW = 12


def setup() -> None:
    import django

    django.setup()


def shapes() -> list[dict]:
    return [json.loads(line) for line in (HELDOUT / "shapes.jsonl").read_text().splitlines() if line]


def ordinary(limit: int | None = None) -> list[str]:
    with gzip.open(HELDOUT / "ordinary.txt.gz", "rt") as f:
        lines = f.read().splitlines()
    return lines[:limit] if limit else lines


def line_for(place: str, text: str) -> dict:
    session = "heldout"
    if place == "posts":
        content = [{"type": "text", "text": text}]
        return {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "session_id": session,
            "message": {"id": "msg_h", "model": "claude-opus-5-5", "content": content},
        }
    if place == "thinking steps":
        content = [{"type": "thinking", "thinking": text, "signature": "sig"}]
        return {
            "type": "assistant",
            "uuid": str(uuid.uuid4()),
            "session_id": session,
            "message": {"id": "msg_h", "model": "claude-opus-5-5", "content": content},
        }
    content = [{"type": "tool_result", "tool_use_id": "toolu_h", "content": text}]
    return {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "session_id": session,
        "message": {"role": "user", "content": content},
    }


WANTED = {"posts": "text", "tool results": "tool_result", "thinking steps": "thinking"}


def stored(place: str, text: str) -> list[tuple[str, object]]:
    """(Message.text, Message.raw) for each Message the write path makes of `text` in `place`."""
    from motion_runner.harnesses import EventKind
    from motion_runner.harnesses.claude_code import ClaudeCodeParser
    from motion_runner.ingest.fit import fit_message
    from motion_runner.ingest.redaction import Redactor
    from motion_runner.ingest.writer import TOOL_RESULT_TEXT_LIMIT
    from motion_runner.models import Kind, Message

    kinds = {
        "text": (EventKind.TEXT, Kind.TEXT),
        "tool_result": (EventKind.TOOL_RESULT, Kind.TOOL_RESULT),
        "thinking": (EventKind.THINKING, Kind.THINKING),
    }
    event_kind, kind = kinds[WANTED[place]]
    out = []
    for event in ClaudeCodeParser("heldout").feed(line_for(place, text)):
        if event.kind != event_kind:
            continue
        body = event.text[:TOOL_RESULT_TEXT_LIMIT] if kind == Kind.TOOL_RESULT else event.text
        message = Message(id=uuid.uuid4(), kind=kind, text=body, raw=event.raw, tool_id=event.tool_id or "")
        fit_message(message, Redactor())
        out.append((message.text, message.raw))
    return out


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)] + [k for k in value if isinstance(k, str)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return []


def pieces(secret: str) -> list[str]:
    out = []
    for part in secret.split("\n"):
        if len(part) <= WINDOW:
            out.append(part)
        else:
            out += [part[i : i + WINDOW] for i in range(len(part) - WINDOW + 1)]
    return [p for p in out if p]


def leaked(secret: str, messages: list[tuple[str, object]]) -> bool:
    found = [s for text, raw in messages for s in [text or "", *strings(raw)]]
    return any(piece in s for piece in pieces(secret) for s in found)


def measure(ordinary_limit: int | None = None) -> dict:
    corpus, lines = shapes(), ordinary(ordinary_limit)
    figures = {}
    for place in PLACES:
        started = time.perf_counter()
        missed = [s for s in corpus if leaked(s["secret"], stored(place, s["text"]))]
        touched = 0
        for line in lines:
            got = stored(place, line)
            if any(text != line.strip() and text != line for text, _ in got):
                touched += 1
        figures[place] = {
            "shapes": len(corpus),
            "kept_out": len(corpus) - len(missed),
            "kept_out_pct": round(100 * (len(corpus) - len(missed)) / len(corpus), 1),
            "missed": [f"{s['source']} ({s['kind']})" for s in missed],
            "ordinary": len(lines),
            "touched": touched,
            "touched_pct": round(100 * touched / len(lines), 3),
            "seconds": round(time.perf_counter() - started, 1),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ordinary", type=int, default=None)
    args = parser.parse_args()
    setup()
    figures = measure(args.ordinary)
    for place, f in figures.items():
        print(
            f"{place}: {f['kept_out']}/{f['shapes']} shapes kept out ({f['kept_out_pct']} %); "
            f"{f['touched']}/{f['ordinary']} ordinary lines touched ({f['touched_pct']} %); {f['seconds']} s"
        )
    missed = sorted({m for f in figures.values() for m in f["missed"]})
    print(f"missed kinds ({len(missed)}):")
    for m in missed:
        where = [p for p, f in figures.items() if m in f["missed"]]
        print(f"  {m}: {', '.join(where)}")


if __name__ == "__main__":
    main()
