"""Markdown is rendered once per text, and a text's render is bounded (issue 20 item 11;
thread/markup.py): a hostile thread costs little to read."""

from __future__ import annotations

import uuid

import pytest

from motion_runner.models import Visibility

pytestmark = pytest.mark.django_db


def post_message(client, persona, message_id: str, text: str, path: str = "messages"):
    data = {"text": text, "id": message_id} if path == "messages" else {"reason": text, "id": message_id}
    return client.post(
        f"/api/motions/harbor/{path}/", data, content_type="application/json", **persona.headers
    )


def test_a_text_past_the_markdown_bound_is_served_plain_without_rendering(monkeypatch):
    from motion_runner.thread import markup

    monkeypatch.setattr(markup, "_render", lambda text: pytest.fail("rendered a text past the bound"))
    assert markup.html_for("text", "![" * 50_000) is None


def test_a_text_is_rendered_once_whichever_process_reads_it_next(monkeypatch):
    from motion_runner.thread import markup

    rendered = []
    real = markup._render
    monkeypatch.setattr(markup, "_render", lambda text: rendered.append(text) or real(text))
    text = f"**once** {uuid.uuid4()}"
    first = markup.html_for("text", text)
    markup.render_markdown.cache_clear()  # another process: nothing of this one's kept
    assert markup.html_for("text", text) == first == f"<p><strong>once</strong> {text[9:]}</p>"
    assert rendered == [text]


def test_reading_a_thread_of_hostile_markdown_costs_little(client, scribe, harbor, monkeypatch):
    """Counted, not timed: a cold read of hostile posts parses none of them past the bounds (it
    took ~15 s of CPU when each was rendered)."""
    from motion_runner.thread import markup

    harbor.visibility = Visibility.PUBLIC
    harbor.save(update_fields=["visibility"])
    for n in range(10):
        assert post_message(client, scribe, str(uuid.uuid4()), "![" * 49_000 + str(n)).status_code == 201
    markup.render_markdown.cache_clear()
    parsed = []
    monkeypatch.setattr(markup, "render_metered", lambda text: parsed.append(text) or (None, 0))
    response = client.get("/api/motions/harbor/messages/", {"since": "2000-01-01T00:00:00Z"})
    assert response.status_code == 200 and len(response.json()["results"]) == 10
    assert [row["html"] for row in response.json()["results"]] == [None] * 10
    assert parsed == []
