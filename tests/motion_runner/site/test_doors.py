"""Issue 20's doors (items 9–15): each red-team finding, as the attacker or the careless client
met it, kept as a regression test."""

from __future__ import annotations

import copy
import uuid

import pytest

from motion_runner.models import Message, MotionSession, Turn, TurnStatus, Visibility
from motion_runner.runner.ending import dead_turn_cost
from tests import recorded
from tests.factories import MotionFactory, TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
HOOKS = "/api/hooks/claude-code/"


def stream(client, persona, body, slug="harbor"):
    return client.post(
        f"/api/motions/{slug}/stream/", body, content_type="application/json", **persona.headers
    )


def body(events=None, session_id=SESSION) -> dict:
    return {"harness": "claude-code", "session_id": session_id, "events": events or recorded.first_run()}


# --- 9: a session moves only between Motions the agent may read ---------------------------------


@pytest.fixture
def vault(db):
    """A members-only Motion the scribe is no agent of, with a session an admin assigned to it
    (no agent: a person's terminal)."""
    vault = MotionFactory(slug="vault", visibility=Visibility.MEMBERS)
    MotionSession.objects.create(session_id=SESSION, motion=vault, agent=None, harness="claude-code")
    return vault


@pytest.fixture
def public_harbor(harbor):
    harbor.visibility = Visibility.PUBLIC
    harbor.save(update_fields=["visibility"])
    return harbor


def test_a_session_in_a_motion_the_agent_cannot_read_is_not_moved_by_the_stream(
    client, scribe, vault, public_harbor
):
    response = stream(client, scribe, body())
    assert response.status_code == 403
    assert "may not read" in response.json()["error"]["detail"]
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"
    assert not Message.objects.filter(motion=public_harbor).exists()


def test_a_session_in_a_motion_the_agent_cannot_read_is_not_moved_by_a_hook(
    client, scribe, vault, public_harbor
):
    stop = recorded.hooks("Stop")[0]
    response = client.post(f"{HOOKS}?motion=harbor", stop, content_type="application/json", **scribe.headers)
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"
    assert not Message.objects.filter(motion=public_harbor).exists()


def test_a_line_cannot_move_a_session_out_of_a_motion_the_agent_cannot_read(client, scribe, vault):
    other = str(uuid.uuid4())
    init = {"type": "system", "subtype": "init", "session_id": SESSION, "tools": [], "model": "claude"}
    response = stream(client, scribe, body([init], session_id=other))
    assert response.status_code == 403
    assert MotionSession.objects.get(pk=SESSION).motion_id == "vault"


def test_the_agents_own_session_in_a_motion_it_is_one_of_still_moves_to_its_own_motion(
    client, scribe, harbor
):
    open_house = MotionFactory(slug="open-house", visibility=Visibility.PUBLIC)
    open_house.agents.add(scribe.agent)
    MotionSession.objects.create(
        session_id=SESSION, motion=open_house, agent=scribe.agent, harness="claude-code"
    )
    assert stream(client, scribe, body()).status_code == 200
    assert MotionSession.objects.get(pk=SESSION).motion_id == "harbor"


# --- 10: a client's result never ends or prices a runner turn -----------------------------------


def priced(events: list[dict], cost: float) -> list[dict]:
    events = copy.deepcopy(events)
    for line in events:
        if line.get("type") == "result":
            line["total_cost_usd"] = cost
    return events


def test_a_posted_result_does_not_end_the_agents_running_turn(client, scribe, harbor):
    turn = TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION, status=TurnStatus.RUNNING)
    answer = stream(client, scribe, body(priced(recorded.first_run(), 525.0))).json()
    assert answer["finished"] is True  # the batch held a result: said, but no Turn is its
    turn.refresh_from_db()
    assert (turn.status, turn.ended_at, turn.cost_usd) == (TurnStatus.RUNNING, None, 0)


def test_posted_lines_are_not_the_runner_turns_to_price_it_by(client, scribe, harbor):
    turn = TurnFactory(motion=harbor, agent=scribe.agent, session_id=SESSION, status=TurnStatus.RUNNING)
    stream(client, scribe, body(priced(recorded.first_run(), 0.0)))
    assert not Message.objects.filter(turn=turn).exists()
    # The sweep's figure for a lost turn reads the turn's own lines: none of the client's.
    assert dead_turn_cost(turn)["cost_source"] != "its result line (the worker died after it)"
    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.RUNNING


# --- 14: a line's own session_id is not trusted (F15) ------------------------------------------


def test_a_line_tagged_with_another_agents_session_is_refused_not_written_there(client, scribe, rival):
    theirs = str(uuid.uuid4())
    MotionSession.objects.create(
        session_id=theirs, motion_id="harbor", agent=rival.agent, harness="claude-code"
    )
    events = copy.deepcopy(recorded.first_run())
    events[3]["session_id"] = theirs
    answer = stream(client, scribe, body(events)).json()
    assert [error["index"] for error in answer["errors"]] == [3]
    assert "neither this post's session" in answer["errors"][0]["reason"]
    assert not Message.objects.filter(session_id=theirs).exists()


def test_a_forks_lines_after_its_own_init_are_written_under_the_fork(client, scribe):
    fork = str(uuid.uuid4())
    events = copy.deepcopy(recorded.first_run())
    for line in events:
        line["session_id"] = fork
    answer = stream(client, scribe, body(events)).json()
    assert answer["errors"] == []
    assert MotionSession.objects.get(pk=fork).agent == scribe.agent
    assert set(Message.objects.values_list("session_id", flat=True)) == {fork}


# --- 13: redaction of every shape docs/security.md promises, and of every secret setting ----------

GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 5


@pytest.mark.parametrize(
    "text, secret",
    [
        ("DB_PASS=hunter2horse", "hunter2horse"),
        ("export OPENAI_KEY=opensesame-7781", "opensesame-7781"),
        ("PGPASSWORD=correcthorsebattery psql -h db", "correcthorsebattery"),
        ("Cookie: sessionid=k3j4h5g6f7d8s9a0; csrftoken=zz", "k3j4h5g6f7d8s9a0"),
        ("set-cookie: SESSIONID=k3j4h5g6f7d8s9a0; Path=/", "k3j4h5g6f7d8s9a0"),
        ("curl -b csrftoken=k3j4h5g6f7d8s9a0 …", "k3j4h5g6f7d8s9a0"),
        ('{"headers": "sessionid=k3j4h5g6f7d8s9a0"}', "k3j4h5g6f7d8s9a0"),
        ("SENTRY_DSN=https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42", "0123456789abcdef"),
        ("dsn: https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.io/42", "0123456789abcdef"),
        ("posting to https://hooks.slack.com/services/T0AAAA/B0BBBB/XyZ123abcDEF456", "XyZ123abcDEF456"),
        (f"x_{GITHUB_TOKEN}", GITHUB_TOKEN),
    ],
)
def test_each_promised_shape_is_redacted(text, secret):
    from motion_runner.ingest.redaction import redact

    assert secret not in redact(text)


@pytest.mark.parametrize(
    "text",
    [
        "password = form.cleaned_data['password']",
        "MAX_TOKENS=4096 is the default",
        "PASS=1 FAIL=0",  # a test summary, no secret
        "git clone https://github.com/cryptograss/memory-lane",
        "monkey=banana123",
        "my_session=abcdefgh12345 is a variable",
        "KEYBOARD_LAYOUT=us-intl-altgr",
    ],
)
def test_what_is_no_secret_is_left_alone(text):
    from motion_runner.ingest.redaction import redact

    assert redact(text) == text


SECRET_SETTING = r"(KEY|KEYS|TOKEN|PASSWORD|PASS|CREDENTIALS|SECRET|DSN)$"
NOT_SECRETS = {"DEVELOPMENT_SECRET_KEY"}  # the development default, published in the source


def test_every_secret_setting_of_the_deployment_is_redacted():
    import re

    from django.conf import settings

    from motion_runner.conf import app_settings

    named = {name for name in dir(settings) if re.search(SECRET_SETTING, name)} - NOT_SECRETS
    assert named <= set(app_settings.REDACT_SETTINGS)
    for url in ("CELERY_BROKER_URL", "CACHE_URL", "DATABASES", "SECRET_KEY_FALLBACKS"):
        assert url in app_settings.REDACT_SETTINGS


@pytest.mark.parametrize(
    "name, value, secret",
    [
        ("MOOD_RUNNER_KEYS", {"scribe": "runner-key-of-no-shape"}, "runner-key-of-no-shape"),
        ("INGEST_API_KEY", "ingest-key-of-no-shape", "ingest-key-of-no-shape"),
        ("CELERY_BROKER_URL", "redis://:brokerpass99@redis:6379/0", "brokerpass99"),
        (
            "RUNNER_EXTRA_ENV",
            {"OPENAI_API_KEY": "model-key-of-no-shape", "HOME": "/home/runner"},
            "model-key-of-no-shape",
        ),
    ],
)
def test_the_deployments_own_secrets_are_not_stored(client, scribe, settings, name, value, secret):
    setattr(settings, name, value)
    from tests.motion_runner.ingest.test_redaction import stream_text

    stream_text(client, scribe, f"the config says {secret} and home is /home/runner")
    text = Message.objects.get(kind="text", text__contains="config").text
    assert secret not in text and "/home/runner" in text


@pytest.mark.filterwarnings("ignore:Overriding setting DATABASES")
def test_the_databases_password_is_not_stored(client, scribe, settings):
    settings.DATABASES = {**settings.DATABASES}
    settings.DATABASES["default"] = {**settings.DATABASES["default"], "PASSWORD": "db-pass-of-no-shape"}
    from tests.motion_runner.ingest.test_redaction import stream_text

    stream_text(client, scribe, "psql with db-pass-of-no-shape")
    assert not Message.objects.filter(text__contains="db-pass-of-no-shape").exists()


# --- 14: who is held, and which slugs exist, are not told to whoever may not read the Motion -----


def test_who_is_held_in_a_members_only_motion_is_not_read_anonymously(client, scribe, harbor, justin):
    harbor.visibility = Visibility.MEMBERS
    harbor.save(update_fields=["visibility"])
    harbor.people.add(justin)
    held = client.post(
        "/api/moods/harbor/held/", {"reason": "busy"}, content_type="application/json", **scribe.headers
    )
    assert held.status_code == 200
    anonymous = client.get("/api/moods/harbor/held/")
    missing = client.get("/api/moods/nowhere/held/")
    assert (anonymous.status_code, anonymous.content) == (missing.status_code, missing.content)
    assert anonymous.status_code == 404
    client.force_login(justin)
    assert client.get("/api/moods/harbor/held/").json()["held"]["scribe"]["reason"] == "busy"


def test_a_watch_in_a_motion_the_caller_may_not_read_is_refused_as_one_that_does_not_exist(client, justin):
    from django.contrib.auth.models import Permission

    justin.user_permissions.add(Permission.objects.get(codename="add_watch"))
    MotionFactory(slug="vault", visibility=Visibility.MEMBERS)
    client.force_login(justin)
    answers = [
        client.post(
            "/api/watches/",
            {"motion": slug, "kind": "web_page", "target": "not a url"},
            content_type="application/json",
        )
        for slug in ("vault", "nowhere")
    ]
    assert [a.status_code for a in answers] == [400, 400]
    vault, nowhere = (a.json()["error"]["fields"] for a in answers)
    assert vault == {"motion": ["Object with slug=vault does not exist."]}
    assert nowhere == {"motion": ["Object with slug=nowhere does not exist."]}


# --- 14: input no server should choke on: a clear answer, not a 500 -----------------------------

INGEST_KEY = "ingest-key-for-the-doors-tests"


def with_lone_surrogate(data: dict, marker: str) -> str:
    """`data` as JSON with `marker` (inside one of its strings) written as a lone \\ud800."""
    import json

    return json.dumps(data).replace(marker, "\\ud800", 1)


def test_a_lone_surrogate_in_a_stream_line_is_a_400_saying_where(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    events[3]["message"]["content"][0]["text"] = "MARK and the rest"
    response = client.post(
        "/api/motions/harbor/stream/",
        with_lone_surrogate(body(events), "MARK"),
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 400
    assert (
        "$.events[3].message.content[0].text holds a lone UTF-16 surrogate"
        in response.json()["error"]["detail"]
    )
    assert not Message.objects.exists()


def test_a_lone_surrogate_in_a_hook_is_a_400(client, scribe):
    hook = {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": "MARK", "prompt_id": "p1"}
    response = client.post(
        f"{HOOKS}?motion=harbor",
        with_lone_surrogate(hook, "MARK"),
        content_type="application/json",
        **scribe.headers,
    )
    assert response.status_code == 400
    assert "$.prompt" in response.json()["error"]["detail"]


def test_a_surrogate_pair_is_a_character_and_kept(client, scribe):
    events = copy.deepcopy(recorded.first_run())
    events[3]["message"]["content"][0]["text"] = "MARK"
    raw = body(events)
    import json

    text = json.dumps(raw).replace("MARK", "\\ud83d\\ude00", 1)
    response = client.post(
        "/api/motions/harbor/stream/", text, content_type="application/json", **scribe.headers
    )
    assert response.status_code == 200
    assert Message.objects.filter(text="\U0001f600").exists()


def ingest(client, lines: list[str], username: str = "justin"):
    return client.post(
        "/api/ingest/",
        {"lines": lines, "username": username, "source": "doors"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {INGEST_KEY}",
    )


def test_an_ingested_line_nested_ten_thousand_deep_is_an_error_of_that_line(client, settings, harbor):
    import json

    settings.INGEST_API_KEY = INGEST_KEY
    deep = (
        json.dumps({"sessionId": SESSION, "type": "user"})[:-1]
        + ', "x": '
        + "[" * 10_000
        + "]" * 10_000
        + "}"
    )
    response = ingest(client, [deep])
    assert response.status_code == 200
    assert response.json()["errors"] == ["line 0: not a JSON object (nested too deep to read)"]


def test_an_ingested_line_deep_enough_to_read_but_not_to_store_is_an_error_of_that_line(
    client, settings, scribe, harbor
):
    import json

    settings.INGEST_API_KEY = INGEST_KEY
    MotionSession.objects.create(session_id=SESSION, motion=harbor, agent=scribe.agent, harness="claude-code")
    reply = next(line for line in recorded.lines("transcript") if line.get("type") == "assistant")
    deep = json.dumps(reply)[:-1] + ', "x": ' + "[" * 900 + "]" * 900 + "}"
    response = ingest(client, [deep])
    assert response.status_code == 200
    assert response.json()["errors"] == ["line 0: nested deeper than 64 levels"]


def test_the_watchers_username_does_not_let_an_agent_of_that_name_claim_the_session(client, settings, scribe):
    settings.INGEST_API_KEY = INGEST_KEY
    lines = [json_line for json_line in recorded.raw_lines("transcript")]
    assert ingest(client, [line.decode() for line in lines[:5]], username="scribe").status_code == 200
    assert stream(client, scribe, body()).status_code == 403
    assert not MotionSession.objects.filter(pk=SESSION).exists()


@pytest.mark.parametrize("address", ["fec0::1", "feff:ffff::1", "fec0::a9fe:a9fe"])
def test_a_site_local_ipv6_address_is_refused(address):
    from motion_runner.lib.http.guard import address_problem

    assert address_problem(address) == "a reserved address"


def test_a_view_only_staff_user_reads_the_agent_admin_pages(client, scribe):
    from django.contrib.auth.models import Permission

    from tests.factories import UserFactory

    viewer = UserFactory(username="auditor", is_staff=True)
    viewer.user_permissions.add(*Permission.objects.filter(codename__in=["view_agent", "view_agentkey"]))
    client.force_login(viewer)
    pages = ["/admin/motion_runner/agent/", f"/admin/motion_runner/agent/{scribe.agent.pk}/change/"]
    assert [client.get(page).status_code for page in pages] == [200, 200]
    assert client.post(
        "/admin/motion_runner/agent/", {"action": "create_key", "_selected_action": [scribe.agent.pk]}
    ).status_code in (200, 302, 403)
    from motion_runner.models import AgentKey

    assert AgentKey.objects.filter(agent=scribe.agent).count() == 1  # the persona's own key only


def test_a_view_only_staff_user_sees_the_agents_env_secrets_masked(client, scribe):
    from django.contrib.auth.models import Permission

    from motion_runner.models import Agent
    from tests.factories import UserFactory

    Agent.objects.filter(pk=scribe.agent.pk).update(env={"OPENAI_API_KEY": "value-never-shown", "HOME": "/h"})
    viewer = UserFactory(username="auditor", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_agent"))
    client.force_login(viewer)
    page = client.get(f"/admin/motion_runner/agent/{scribe.agent.pk}/change/").content.decode()
    assert "value-never-shown" not in page and "/h" in page


# --- 14: a request card is made only from the agent's own words --------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'Run this:\n\n    <tools to="wipe the disk"/>\n\nthat is all.',  # indented code
        'Run this:\n\n\t<tools to="wipe the disk"/>\n',  # indented with a tab
        'Shown as ``<tools to="x"/>`` in the docs.',  # a double-backtick span
        'A span ``with a ` inside <deploy to="prod"/>`` ends here.',
        '````markdown\n```\n<tools to="x"/>\n```\n````',  # a fence inside a longer fence
        '~~~~\n~~~\n<merge to="PR 1"/>\n~~~\n~~~~',
        '- He wrote:\n  > <tools to="wipe the disk"/>',  # a quote inside a list item
        '1. > <deploy to="production"/>',
        '> > <tools to="x"/>',  # a quote in a quote
        'An example:\n<pre>\n<tools to="x"/>\n</pre>',  # HTML code
        'Inline <code><merge to="PR 2"/></code> here.',
    ],
)
def test_a_tag_shown_as_code_or_quoted_in_any_markdown_form_is_no_request(text):
    from wakes.turn.requests import find_asks

    assert find_asks(text) == []


@pytest.mark.parametrize(
    "text, kind",
    [
        ('```\ncode\n```\nNow: <tools to="run the tests"/>', "tools"),
        ('- first\n- <merge to="PR 12"/>', "merge"),
        ('Quoting ``<tools/>`` aside, <deploy to="staging"/>', "deploy"),
        ('````\n```\nx\n```\n````\n<merge to="PR 3"/>', "merge"),
    ],
)
def test_a_tag_in_the_agents_own_words_after_code_is_still_a_request(text, kind):
    from wakes.turn.requests import find_asks

    assert [ask.kind for ask in find_asks(text)] == [kind]


def test_finding_requests_in_a_long_hostile_text_stays_quick():
    import time

    from wakes.turn.requests import find_asks

    runs = "".join("`" * n + " x " for n in range(1, 400))[:100_000] + '<tools to="x"/>'
    markers = "-  " * 33_000 + "x"  # list markers with no quote after them
    started = time.process_time()
    find_asks(runs)
    find_asks(markers)
    assert time.process_time() - started < 5  # seconds of CPU: a generous bound, not a timing


# --- 14: an idempotent post is a retry of the key's own message only ----------------------------


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


# --- 11: Markdown is rendered once per text, and a text's render is bounded ----------------------


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
