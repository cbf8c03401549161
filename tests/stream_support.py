"""Posting a recorded Claude Code session to the stream API, as the API tests do."""

from __future__ import annotations

from tests import recorded

SESSION = recorded.session_id()
HOOKS = "/api/hooks/claude-code/"


def stream(client, persona, body, slug="harbor"):
    return client.post(
        f"/api/motions/{slug}/stream/", body, content_type="application/json", **persona.headers
    )


def body(events=None, session_id=SESSION) -> dict:
    return {"harness": "claude-code", "session_id": session_id, "events": events or recorded.first_run()}
