"""The API other agents use: keys, the stream, quiet dots, messages, turns, the schema."""

from __future__ import annotations

import copy

import pytest
from django.core.management import call_command
from django.urls import reverse

from motion_runner.api.auth import hash_key
from motion_runner.models import AgentKey, Message, MotionSession, Turn
from tests import recorded
from tests.factories import MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()


def stream(client, persona, body, slug="harbor", **extra):
    headers = persona.headers if persona else {}
    return client.post(
        f"/api/motions/{slug}/stream/", body, content_type="application/json", **headers, **extra
    )


def body(events=None, **overrides):
    data = {"harness": "claude-code", "session_id": SESSION, "events": events or recorded.first_run()}
    data.update(overrides)
    return data


# --- keys ---------------------------------------------------------------------------------------


def test_a_key_is_stored_only_as_its_sha256(scribe):
    record = AgentKey.objects.get(agent=scribe.agent)
    assert record.hashed == hash_key(scribe.key)
    assert scribe.key not in {record.hashed, record.prefix, record.label}
    assert scribe.key.startswith(f"mrk_{record.prefix}_")


def test_no_key_is_a_401(client, harbor):
    response = stream(client, None, body())
    assert response.status_code == 401
    assert response.json()["error"]["status"] == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_a_wrong_key_is_a_401(client, scribe):
    wrong = scribe.key[:-4] + ("aaaa" if not scribe.key.endswith("aaaa") else "bbbb")
    response = client.post(
        "/api/motions/harbor/stream/",
        body(),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {wrong}",
    )
    assert response.status_code == 401
    assert Message.objects.count() == 0


def test_a_key_of_another_shape_is_a_401(client, scribe):
    response = client.post(
        "/api/motions/harbor/stream/",
        body(),
        content_type="application/json",
        HTTP_AUTHORIZATION="Bearer nonsense",
    )
    assert response.status_code == 401


def test_a_revoked_key_is_a_401(client, scribe):
    call_command("agent_key", "scribe", revoke=AgentKey.objects.get(agent=scribe.agent).prefix)
    response = stream(client, scribe, body())
    assert response.status_code == 401
    assert "revoked" in response.json()["error"]["detail"]


def test_the_agent_key_command_prints_a_working_key_once(client, harbor, capsys):
    from tests.factories import AgentFactory

    agent = AgentFactory(name="porter")
    harbor.agents.add(agent)
    call_command("agent_key", "porter", label="laptop")
    key = capsys.readouterr().out.strip()
    response = client.post(
        "/api/motions/harbor/quiet/",
        {"reason": "nothing to add"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {key}",
    )
    assert response.status_code == 201
    assert AgentKey.objects.get(agent=agent).last_used_at is not None


def test_a_key_cannot_speak_for_another_agent(client, scribe, rival):
    response = stream(client, scribe, body(agent="rival"))
    assert response.status_code == 403
    assert "@scribe only" in response.json()["error"]["detail"]
    assert Message.objects.count() == 0


def test_a_key_cannot_post_a_message_as_another_agent(client, scribe, rival):
    response = client.post(
        "/api/motions/harbor/messages/",
        {"text": "hi", "agent": "rival"},
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 403


def test_a_key_cannot_write_into_another_agents_session(client, scribe, rival):
    assert stream(client, rival, body()).status_code == 200
    response = stream(client, scribe, body())
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).agent == rival.agent


def test_an_agent_outside_the_motion_is_refused(client, scribe):
    MotionFactory(slug="elsewhere")
    response = stream(client, scribe, body(), slug="elsewhere")
    assert response.status_code == 403


# --- the stream ---------------------------------------------------------------------------------


def test_the_stream_writes_recorded_events_once(client, scribe):
    response = stream(client, scribe, body())
    assert response.status_code == 200
    answer = response.json()
    # 8 events: 5 wrote a Message; system/init and the two hook notices have nothing to show.
    assert answer == {"imported": 5, "skipped": 3, "errors": [], "finished": True}
    kinds = list(Message.objects.filter(motion_id="harbor").values_list("kind", flat=True))
    assert kinds == ["text", "tool_call", "tool_result", "text", "turn_end"]
    assert set(Message.objects.values_list("source", flat=True)) == {"api"}
    assert MotionSession.objects.get(pk=SESSION).motion_id == "harbor"


def test_the_same_batch_again_is_all_skipped(client, scribe):
    stream(client, scribe, body())
    answer = stream(client, scribe, body()).json()
    assert answer["imported"] == 0 and answer["skipped"] == len(recorded.first_run())
    assert Message.objects.count() == 5


def test_an_unknown_motion_is_a_404(client, scribe):
    assert stream(client, scribe, body(), slug="nowhere").status_code == 404


def test_the_agents_own_session_posted_in_another_motion_moves_there(client, scribe):
    other = MotionFactory(slug="other")
    other.agents.add(scribe.agent)
    assert stream(client, scribe, body(), slug="other").status_code == 200
    response = stream(client, scribe, body(recorded.lines("stream")[8:]))
    assert response.status_code == 200
    assert MotionSession.objects.get(pk=SESSION).motion_id == "harbor"
    assert Message.objects.filter(motion_id="harbor", sender=scribe.agent.name).exists()


def test_a_session_that_moved_says_so_in_both_threads(client, scribe):
    other = MotionFactory(slug="other")
    other.agents.add(scribe.agent)
    stream(client, scribe, body(), slug="other")
    stream(client, scribe, body())
    left = Message.objects.get(motion_id="other", sender="runner")
    arrived = Message.objects.get(motion_id="harbor", sender="runner")
    assert "moved to Motion 'harbor'" in left.text
    assert "moved here from Motion 'other'" in arrived.text


def test_a_persons_session_in_a_motion_the_agent_is_one_of_is_not_moved_by_its_key(client, scribe, harbor):
    desk = MotionFactory(slug="desk", visibility="members")  # the scribe is one of its agents
    desk.agents.add(scribe.agent)
    MotionSession.objects.create(session_id=SESSION, motion=desk, agent=None, harness="claude-code")
    harbor.visibility = "public"
    harbor.save(update_fields=["visibility"])

    response = stream(client, scribe, body())

    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "desk"
    assert not Message.objects.filter(motion=harbor).exists()  # its readers are not told it moved


def test_another_agents_session_stays_refused(client, scribe, rival):
    assert stream(client, rival, body()).status_code == 200
    response = stream(client, scribe, body())
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).agent == rival.agent


@pytest.mark.parametrize(
    "bad, field",
    [
        ({"harness": "emacs", "session_id": SESSION, "events": []}, "harness"),
        ({"harness": "claude-code", "events": []}, "session_id"),
        ({"harness": "claude-code", "session_id": "", "events": []}, "session_id"),
        ({"harness": "claude-code", "session_id": "x" * 201, "events": []}, "session_id"),
        ({"harness": "claude-code", "session_id": "not-a-uuid", "events": []}, "session_id"),
        ({"harness": "claude-code", "session_id": SESSION}, "events"),
        ({"harness": "claude-code", "session_id": SESSION, "events": {"type": "result"}}, "events"),
        ({"harness": "claude-code", "session_id": SESSION, "events": "[]"}, "events"),
    ],
)
def test_a_bad_body_is_a_400_naming_the_field(client, scribe, bad, field):
    response = stream(client, scribe, bad)
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]
    assert Message.objects.count() == 0


def test_a_body_that_is_not_json_is_a_400(client, scribe):
    response = client.post(
        "/api/motions/harbor/stream/", "{not json", content_type="application/json", **scribe.headers
    )
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_a_body_that_is_a_list_is_a_400(client, scribe):
    response = stream(client, scribe, [1, 2])
    assert response.status_code == 400


def test_more_than_500_events_is_a_413_and_writes_nothing(client, scribe):
    events = (recorded.first_run() * 100)[:501]
    response = stream(client, scribe, body(events))
    assert response.status_code == 413
    assert "500" in response.json()["error"]["detail"]
    assert Message.objects.count() == 0


def test_exactly_500_events_are_taken(client, scribe):
    events = (recorded.first_run() * 100)[:500]
    assert stream(client, scribe, body(events)).status_code == 200


def test_one_bad_event_is_reported_and_the_rest_land(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    broken = next(i for i, e in enumerate(events) if e["type"] == "assistant")
    events[broken]["uuid"] = "not-a-uuid"
    events.insert(1, "a string, not an event")
    answer = stream(client, scribe, body(events)).json()
    indexes = {e["index"] for e in answer["errors"]}
    assert indexes == {1, broken + 1}
    assert answer["imported"] == 4
    assert answer["finished"] is True


def test_a_line_of_unknown_type_is_neither_an_error_nor_a_message(client, scribe):
    events = recorded.first_run() + [{"type": "brand_new_thing", "session_id": SESSION}]
    answer = stream(client, scribe, body(events)).json()
    assert answer["errors"] == [] and answer["imported"] == 5


def test_without_a_running_turn_the_result_is_a_turn_end_message(client, scribe):
    stream(client, scribe, body())
    end = Message.objects.get(kind="turn_end")
    assert end.text == "done · $0.0019"
    assert not Turn.objects.exists()


def test_a_batch_without_a_result_is_not_finished(client, scribe):
    events = [e for e in recorded.first_run() if e["type"] != "result"]
    assert stream(client, scribe, body(events)).json()["finished"] is False


# --- quiet ----------------------------------------------------------------------------------------


def test_quiet_posts_a_dot_in_memory_lanes_shape(client, scribe):
    response = client.post(
        "/api/motions/harbor/quiet/",
        {"reason": "not for me", "by": "screen"},
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 201
    dot = Message.objects.get()
    assert dot.kind == "dot" and dot.sender == "scribe"
    assert dot.text == '<silent by="screen">not for me</silent>'
    assert dot.raw == {"silent": {"by": "screen", "reason": "not for me"}}


def test_quiet_defaults_to_the_agent_and_is_idempotent_with_an_id(client, scribe):
    data = {"reason": "nothing to add", "id": "0f8e2d0c-1111-4222-8333-444455556666"}
    first = client.post("/api/motions/harbor/quiet/", data, content_type="application/json", **scribe.headers)
    again = client.post("/api/motions/harbor/quiet/", data, content_type="application/json", **scribe.headers)
    assert (first.status_code, again.status_code) == (201, 200)
    assert Message.objects.get().text == '<silent by="agent">nothing to add</silent>'


@pytest.mark.parametrize(
    "bad", [{}, {"reason": ""}, {"reason": "x", "by": "someone"}, {"reason": "x", "id": "no"}]
)
def test_quiet_with_a_bad_body_is_a_400(client, scribe, bad):
    response = client.post(
        "/api/motions/harbor/quiet/", bad, content_type="application/json", **scribe.headers
    )
    assert response.status_code == 400
    assert not Message.objects.exists()


def test_quiet_needs_a_key(client, harbor, justin):
    client.force_login(justin)
    response = client.post("/api/motions/harbor/quiet/", {"reason": "x"}, content_type="application/json")
    assert response.status_code in (401, 403)
    assert not Message.objects.exists()


# --- messages ---------------------------------------------------------------------------------


def test_an_agent_posts_a_message_as_itself(client, scribe):
    response = client.post(
        "/api/motions/harbor/messages/",
        {"text": "hello from scribe"},
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 201
    message = Message.objects.get()
    assert (message.sender, message.agent, message.source, message.author) == (
        "scribe",
        scribe.agent,
        "api",
        None,
    )


def test_a_signed_in_person_posts_as_themselves(client, harbor, justin):
    client.force_login(justin)
    response = client.post(
        "/api/motions/harbor/messages/", {"text": "hi all"}, content_type="application/json"
    )
    assert response.status_code == 201
    assert Message.objects.get().author == justin


def test_an_outsider_cannot_post(client, harbor):
    response = client.post("/api/motions/harbor/messages/", {"text": "hi"}, content_type="application/json")
    assert response.status_code == 401
    assert not Message.objects.exists()


def test_messages_filter_by_kind_and_page_by_cursor(client, scribe):
    stream(client, scribe, body())
    page = client.get("/api/motions/harbor/messages/?kind=text,turn_end&limit=2", **scribe.headers).json()
    assert [m["kind"] for m in page["results"]] == ["text", "text"]
    rest = client.get(
        f"/api/motions/harbor/messages/?kind=text,turn_end&after={page['next']}", **scribe.headers
    ).json()
    assert [m["kind"] for m in rest["results"]] == ["turn_end"]


# --- motions and turns ----------------------------------------------------------------------


def test_motions_list_and_detail(client, scribe):
    listing = client.get("/api/motions/?agent=scribe", **scribe.headers).json()
    assert [m["slug"] for m in listing["results"]] == ["harbor"]
    assert client.get("/api/motions/harbor/", **scribe.headers).json()["agents"] == ["scribe"]


def test_turns_list_with_cost_and_outcome_filtered_by_status(client, scribe, harbor):
    TurnFactory(motion=harbor, agent=scribe.agent, status="failed", error="the harness exited with code 1")
    TurnFactory(
        motion=harbor, agent=scribe.agent, status="finished", result_subtype="success", cost_usd="0.5"
    )
    listing = client.get("/api/turns/?motion=harbor&status=finished", **scribe.headers).json()
    assert [t["outcome"] for t in listing["results"]] == ["finished (success)"]
    assert listing["results"][0]["cost_usd"] == "0.500000"
    failed = client.get("/api/turns/?status=failed", **scribe.headers).json()["results"][0]
    assert failed["outcome"] == "failed: the harness exited with code 1"
    assert client.get(f"/api/turns/{failed['id']}/", **scribe.headers).json()["status"] == "failed"


def test_turns_with_an_unknown_status_or_time_are_a_400(client, scribe):
    assert client.get("/api/turns/?status=sleeping", **scribe.headers).status_code == 400
    assert client.get("/api/turns/?since=yesterday", **scribe.headers).status_code == 400


# --- schema and docs ------------------------------------------------------------------------


def test_the_schema_describes_the_agent_endpoints(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/motions/{slug}/stream/",
        "/api/motions/{slug}/quiet/",
        "/api/hooks/claude-code/",
        "/api/turns/",
    ):
        assert path in paths
    assert "agentKey" in response.json()["components"]["securitySchemes"]


def test_the_docs_page_loads_swagger_ui_from_this_server(client):
    page = client.get(reverse("api-docs")).content.decode()
    assert "swagger-ui" in page
    assert "cdn.jsdelivr.net" not in page and "unpkg.com" not in page
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in page


# --- admin and housekeeping -------------------------------------------------------------------


def test_the_admin_action_shows_a_new_key_once(admin_client, scribe):
    response = admin_client.post(
        "/admin/motion_runner/agent/",
        {"action": "create_key", "_selected_action": [scribe.agent.pk]},
        follow=True,
    )
    shown = [str(m) for m in response.context["messages"]]
    key = shown[0].rsplit(": ", 1)[1]
    assert key.startswith("mrk_")
    assert AgentKey.objects.filter(hashed=hash_key(key), agent=scribe.agent).exists()
    listing = admin_client.get("/admin/motion_runner/agentkey/").content.decode()
    assert key not in listing


def test_the_admin_revokes_a_key(admin_client, client, scribe):
    record = AgentKey.objects.get(agent=scribe.agent)
    admin_client.post("/admin/motion_runner/agentkey/", {"action": "revoke", "_selected_action": [record.pk]})
    assert stream(client, scribe, body()).status_code == 401


def test_no_model_change_is_missing_a_migration():
    call_command("makemigrations", "motion_runner", check=True, dry_run=True, verbosity=0)


def test_the_periodic_import_is_scheduled_and_runs(settings, tmp_path):
    from motion_runner.tasks import import_transcripts_task

    assert settings.CELERY_BEAT_SCHEDULE["import-transcripts"]["task"] == "motion_runner.import_transcripts"
    settings.TRANSCRIPT_DIRS = [str(tmp_path)]
    assert import_transcripts_task() == {"files": 0, "imported": 0, "skipped": 0}


def test_a_body_over_the_size_limit_is_a_413_in_the_api_error_shape(client, scribe, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = stream(client, scribe, body())
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "body_too_large"
    assert not Message.objects.exists()


def test_every_event_is_counted_once_in_imported_skipped_or_errors(client, scribe):
    events = copy.deepcopy(recorded.first_run()) + ["not an event"]
    events += copy.deepcopy(recorded.first_run()[3:5])  # a repeat inside the batch
    answer = stream(client, scribe, body(events)).json()
    assert answer["imported"] + answer["skipped"] + len(answer["errors"]) == len(events)
    assert (answer["imported"], answer["skipped"], len(answer["errors"])) == (5, 5, 1)


def test_the_harness_defaults_to_claude_code(client, scribe):
    data = body()
    del data["harness"]
    response = stream(client, scribe, data)
    assert response.status_code == 200
    assert MotionSession.objects.get(pk=SESSION).harness == "claude-code"
