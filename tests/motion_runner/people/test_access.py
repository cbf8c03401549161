"""Issue 10: who may read, post, watch, answer and type in a Motion (docs/security.md).

One matrix: every endpoint × every kind of caller, on Harbor, a Motion with the default
visibility (signed-in people and its own agents). Personas: nobody (anonymous); an outsider
(signed in with a password, not one of Harbor's people, no watch permission); Justin, one of
Harbor's people who keeps its watches; Ada, signed in with her SSH key, who keeps watches too;
@scribe, Harbor's agent; @stray, an agent of another Motion; and @scribe's revoked old key.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Permission
from django.test import Client

from motion_runner.api.auth import create_key, revoke_key
from motion_runner.models import Kind, Visibility
from tests.factories import (
    AgentFactory,
    MessageFactory,
    MotionFactory,
    TurnFactory,
    UserFactory,
    WatchFactory,
)
from wakes.models import WakeRequest

pytestmark = pytest.mark.django_db

PERSONAS = ["anonymous", "outsider", "member", "ssh_member", "member_agent", "other_agent", "revoked_key"]


@dataclass
class Harbor:
    motion: object
    turn: object
    watch: object
    request: object


@pytest.fixture
def harbor_world() -> Harbor:
    motion = MotionFactory(slug="harbor", title="Harbor")
    scribe = AgentFactory(name="scribe")
    motion.agents.add(scribe)
    elsewhere = MotionFactory(slug="elsewhere")
    elsewhere.agents.add(AgentFactory(name="stray"))
    turn = TurnFactory(motion=motion, agent=scribe, status="finished")
    card = MessageFactory(motion=motion, agent=scribe, sender="scribe", kind=Kind.REQUEST, text="deploy")
    request = WakeRequest.objects.create(motion=motion, agent=scribe, message=card, kind="deploy", to="v2")
    watch = WatchFactory(motion=motion, kind="web_page", target="https://example.org/")
    return Harbor(motion, turn, watch, request)


def client_for(persona: str, harbor: Harbor) -> Client:
    client = Client()
    watch_perms = Permission.objects.filter(codename__in=["add_watch", "change_watch", "delete_watch"])
    if persona in ("outsider", "member", "ssh_member"):
        person = UserFactory()
        if persona != "outsider":
            harbor.motion.people.add(person)
            person.user_permissions.add(*watch_perms)
        client.force_login(person)
        session = client.session
        session["sign_in"] = "ssh" if persona == "ssh_member" else "password"
        session.save()
    elif persona in ("member_agent", "other_agent", "revoked_key"):
        agent = (
            harbor.motion.agents.get()
            if persona != "other_agent"
            else AgentFactory._meta.model.objects.get(name="stray")
        )
        record, key = create_key(agent)
        if persona == "revoked_key":
            revoke_key(record.prefix)
        client.defaults["HTTP_AUTHORIZATION"] = f"Bearer {key}"
    return client


def post_json(path: str, body: dict) -> Callable:
    return lambda c, h: c.post(path.format(h=h), body, content_type="application/json")


# The agent endpoints (stream, quiet, hooks) take only an agent key: a person's sign-in is no
# key there, so a person is a 401 like nobody.
SESSION = "5b0e1c52-8a43-4a4e-9a39-0d0c2f1a7e11"  # Claude Code session ids are UUIDs

ENDPOINTS: dict[str, tuple[Callable, tuple[int, ...]]] = {
    # name: (request, expected status for each persona in PERSONAS order)
    "motion detail": (lambda c, h: c.get("/api/motions/harbor/"), (404, 200, 200, 200, 200, 404, 401)),
    "messages": (lambda c, h: c.get("/api/motions/harbor/messages/"), (404, 200, 200, 200, 200, 404, 401)),
    "holds": (lambda c, h: c.get("/api/motions/harbor/holds/"), (404, 200, 200, 200, 200, 404, 401)),
    "search": (
        lambda c, h: c.get("/api/motions/harbor/search/?q=hello"),
        (404, 200, 200, 200, 200, 404, 401),
    ),
    "post a message": (
        post_json("/api/motions/harbor/messages/", {"text": "hello"}),
        (401, 201, 201, 201, 201, 403, 401),
    ),
    "stream": (
        post_json(
            "/api/motions/harbor/stream/", {"harness": "claude-code", "session_id": SESSION, "events": []}
        ),
        (401, 401, 401, 401, 200, 403, 401),
    ),
    "memory-lane's stream": (
        post_json("/api/moods/harbor/stream/", {"session_id": SESSION, "events": []}),
        (401, 401, 401, 401, 200, 403, 401),
    ),
    "memory-lane's quiet": (
        post_json("/api/moods/harbor/quiet/", {"reason": "nothing to add"}),
        (401, 401, 401, 401, 201, 403, 401),
    ),
    "memory-lane's held (read)": (
        lambda c, h: c.get("/api/moods/harbor/held/"),
        (404, 200, 200, 200, 200, 404, 401),
    ),
    "quiet": (
        post_json("/api/motions/harbor/quiet/", {"reason": "nothing to add"}),
        (401, 401, 401, 401, 201, 403, 401),
    ),
    "hooks": (
        post_json("/api/hooks/claude-code/?motion=harbor", {"session_id": "s-2", "hook_event_name": "Stop"}),
        (401, 401, 401, 401, 200, 403, 401),
    ),
    "turn detail": (lambda c, h: c.get(f"/api/turns/{h.turn.pk}/"), (404, 200, 200, 200, 200, 404, 401)),
    "answer a request": (
        lambda c, h: c.post(f"/api/requests/{h.request.pk}/done/"),
        (401, 200, 200, 200, 403, 404, 401),
    ),
    "typing": (lambda c, h: c.post("/api/motions/harbor/typing/"), (401, 200, 200, 200, 403, 404, 401)),
    "watch detail": (lambda c, h: c.get(f"/api/watches/{h.watch.pk}/"), (404, 200, 200, 200, 200, 404, 401)),
    "add a watch": (
        post_json(
            "/api/watches/", {"motion": "harbor", "kind": "web_page", "target": "https://example.com/"}
        ),
        (401, 403, 201, 201, 201, 400, 401),
    ),
    "edit a watch": (
        lambda c, h: c.patch(f"/api/watches/{h.watch.pk}/", {"label": "x"}, content_type="application/json"),
        (401, 403, 200, 200, 200, 404, 401),
    ),
    "pause a watch": (
        lambda c, h: c.post(f"/api/watches/{h.watch.pk}/pause/"),
        (401, 403, 200, 200, 200, 404, 401),
    ),
    "delete a watch": (
        lambda c, h: c.delete(f"/api/watches/{h.watch.pk}/"),
        (401, 403, 204, 204, 204, 404, 401),
    ),
    # Pages are for people: a key is no sign-in there, so a key holder, like nobody, is sent to
    # the sign-in page.
    "thread page": (lambda c, h: c.get("/motions/harbor/"), (302, 200, 200, 200, 302, 302, 302)),
}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_the_access_matrix(endpoint, persona, harbor_world):
    send, expected = ENDPOINTS[endpoint]
    client = client_for(persona, harbor_world)

    response = send(client, harbor_world)

    assert response.status_code == expected[PERSONAS.index(persona)], response.content[:300]


LISTS = {
    "motions": ("/api/motions/", "slug", "harbor"),
    "turns": ("/api/turns/", "id", None),
    "watches": ("/api/watches/", "id", None),
}


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("listing", list(LISTS))
def test_a_list_shows_only_what_the_caller_may_read(listing, persona, harbor_world):
    path, key, _ = LISTS[listing]
    wanted = {"motions": "harbor", "turns": harbor_world.turn.pk, "watches": harbor_world.watch.pk}[listing]
    client = client_for(persona, harbor_world)

    response = client.get(path)

    if persona == "revoked_key":
        assert response.status_code == 401
        return
    rows = response.json()
    rows = rows["results"] if isinstance(rows, dict) else rows
    may_read = persona not in ("anonymous", "other_agent")
    assert (wanted in [row[key] for row in rows]) is may_read


def test_the_motion_list_page_names_no_motion_to_an_anonymous_reader(harbor_world):
    assert b"Harbor" not in Client().get("/").content


def test_a_members_only_motion_is_a_404_to_a_signed_in_outsider(harbor_world):
    harbor_world.motion.visibility = Visibility.MEMBERS
    harbor_world.motion.save()

    assert client_for("outsider", harbor_world).get("/api/motions/harbor/messages/").status_code == 404
    assert client_for("member", harbor_world).get("/api/motions/harbor/messages/").status_code == 200


def test_a_public_motion_is_read_by_anyone_but_written_by_nobody_anonymous(harbor_world):
    harbor_world.motion.visibility = Visibility.PUBLIC
    harbor_world.motion.save()
    anonymous = Client()

    assert anonymous.get("/api/motions/harbor/messages/").status_code == 200
    posted = anonymous.post("/api/motions/harbor/messages/", {"text": "hi"}, content_type="application/json")
    assert posted.status_code == 401


class NobodyReads:
    """A host project's own rules, put in through the one setting."""

    def readable(self, actor, motions):
        return motions.none()

    def can_read(self, actor, motion):
        return False

    def can_post(self, actor, motion):
        return False

    def can_type(self, actor, motion):
        return False

    def can_answer_request(self, actor, motion):
        return False

    def can_write_watch(self, actor, motion, action):
        return False

    def is_member_agent(self, actor, motion):
        return False


def test_a_host_project_replaces_the_rules_through_one_setting(harbor_world, settings):
    settings.MOTION_RUNNER_ACCESS = "tests.motion_runner.people.test_access.NobodyReads"
    member = client_for("member", harbor_world)

    assert member.get("/api/motions/harbor/messages/").status_code == 404
    assert member.get("/api/motions/").json()["results"] == []
