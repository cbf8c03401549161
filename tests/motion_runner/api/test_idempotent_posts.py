"""An idempotent post is a retry of the key's own message only (issue 20 item 14): another agent's
message id is a 409 that tells nothing of their message."""

from __future__ import annotations

import uuid

import pytest

pytestmark = pytest.mark.django_db


def post_message(client, persona, message_id: str, text: str, path: str = "messages"):
    data = {"text": text, "id": message_id} if path == "messages" else {"reason": text, "id": message_id}
    return client.post(
        f"/api/motions/harbor/{path}/", data, content_type="application/json", **persona.headers
    )


def test_a_post_under_another_agents_message_id_is_a_409_not_their_message(client, scribe, rival):
    message_id = str(uuid.uuid4())
    assert post_message(client, rival, message_id, "rival's private plan").status_code == 201
    response = post_message(client, scribe, message_id, "hello")
    assert response.status_code == 409
    assert "rival's private plan" not in response.content.decode()


def test_a_retry_of_the_keys_own_post_answers_its_message(client, scribe):
    message_id = str(uuid.uuid4())
    assert post_message(client, scribe, message_id, "hello").status_code == 201
    again = post_message(client, scribe, message_id, "hello")
    assert (again.status_code, again.json()["id"]) == (200, message_id)


def test_a_quiet_dot_under_another_agents_message_id_is_a_409(client, scribe, rival):
    message_id = str(uuid.uuid4())
    assert post_message(client, rival, message_id, "rival's words").status_code == 201
    assert post_message(client, scribe, message_id, "nothing to add", path="quiet").status_code == 409
