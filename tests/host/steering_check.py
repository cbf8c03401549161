"""What tests/motion_runner/memory_lane/test_memory_lane_steering.py does inside the host project,
after `migrate`: memory-lane's own settings rows and its AZ5 steer the apps (issue 32, item 3), and
the apps' menus and scram land in memory-lane's rows. Prints one JSON object.

`python -m tests.host.steering_check` with DJANGO_SETTINGS_MODULE=tests.host.settings.

"Within one tick": every change below is made by a row alone (as memory-lane's page writes it),
then the next consider-loop tick (`loop.tick`, the clock an hour on, past any quiet wait) or the
next post shows what wakes.
"""

from __future__ import annotations

import json
import time
import uuid
from datetime import timedelta

import django

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from motion_runner.models import Agent, Kind, Message, Scram, SshKey  # noqa: E402
from motion_runner.record import binding  # noqa: E402
from motion_runner.runner.stopping import lift_scram, raise_scram  # noqa: E402
from tests.host.conversations import models as host  # noqa: E402
from tests.host.conversations import page  # noqa: E402
from wakes.consider_loop import loop  # noqa: E402
from wakes.decision.steering import hushes, steering_for  # noqa: E402
from wakes.models import Consideration, ListenState, MentionWake, Steer, clock  # noqa: E402

HOST = "memory-lane.example"


def host_post(mood, sender, text: str) -> uuid.UUID:
    """A post made by memory-lane's composer: a row of its own Message model."""
    post_id = uuid.uuid4()
    with transaction.atomic():
        host.Message.objects.create(
            id=post_id, content=text, sender=sender, mood=mood, timestamp=int(time.time() * 1000)
        )
    return post_id


def setting(key: str, value, *, mood=None, agent=None, by=None, note: str = ""):
    """A row as memory-lane's page (its settings API) or its admin's AZ5 writes it."""
    with transaction.atomic():
        return host.Setting.objects.create(key=key, value=value, mood=mood, agent=agent, set_by=by, note=note)


def tick_an_hour_on() -> list[str]:
    """One tick of the consider loop, the clock an hour on: the pairs it considers, by Motion."""
    clock.set_now(timezone.now() + timedelta(hours=1))
    try:
        return sorted(f"{c.motion_id}:{c.agent.name}" for c in loop.tick(dispatch=False))
    finally:
        clock.set_now(None)


def mention_status(post_id: uuid.UUID, agent: Agent) -> str | None:
    found = MentionWake.objects.filter(message_id=post_id, agent=agent).first()
    return found.status if found else None


def main() -> dict:
    seen: dict = {}
    record = binding()
    justin = host.ThinkingEntity.objects.create(
        name="justin", participant_type="human", is_biological_human=True
    )
    visitor = host.ThinkingEntity.objects.create(
        name="visitor", participant_type="human", is_biological_human=True
    )
    host.ThinkingEntity.objects.create(name="magent", participant_type="ai", is_biological_human=False)
    lobby = host.Mood.objects.create(slug="lobby", title="lobby")
    porch = host.Mood.objects.create(slug="porch", title="porch")
    magent = Agent.objects.create(name="magent", harness="claude-code")
    for mood in (lobby, porch):
        record.motion_for_mood(mood).agents.add(magent)
    # justin signs in here with an SSH key (he may widen); visitor has only a password.
    person = get_user_model().objects.create_user("justin", password="pw")
    get_user_model().objects.create_user("visitor", password="pw")
    SshKey.objects.create(user=person, public_key="ssh-ed25519 AAAA justin", fingerprint="SHA256:justin")
    ListenState.objects.all().delete()

    # 1. memory-lane's "mentions only" for the lobby (every agent): the next tick considers the
    # porch's post and not the lobby's; a mention in the lobby still wakes.
    setting("listening", {"mode": "mentions", "until": None}, mood=lobby, by=justin)
    host_post(lobby, justin, "anyone around?")
    host_post(porch, justin, "anyone around?")
    lobby_steering = steering_for("lobby", magent.pk)
    seen["mentions_only"] = {
        "listening": lobby_steering.listening,
        "set_by": lobby_steering.set_by.get("listening", ""),
        "porch_listening": steering_for("porch", magent.pk).listening,
        "considered": tick_an_hour_on(),
        "hushes": {f"{m}:{a}": v for (m, a), v in hushes(["lobby", "porch"]).items()},
    }
    mention = host_post(lobby, justin, "@magent what is on the list?")
    seen["mentions_only"]["mention"] = mention_status(mention, magent)
    seen["mentions_only"]["said_in_thread"] = list(
        record.motion_for_mood(lobby)
        .messages.filter(text__contains="listening")
        .values_list("text", flat=True)
    )

    # 2. memory-lane's AZ5 raises this project's scram; lifting it there lifts it here.
    setting("scram", True, by=justin, note="runaway agents")
    held = Scram.holding()
    during = host_post(porch, justin, "@magent are you there?")
    seen["az5"] = {
        "raised": [held.raised_by, held.reason] if held else None,
        "tick": tick_an_hour_on(),
        "mention": mention_status(during, magent),
    }
    setting("scram", False, by=justin, note="all clear")
    seen["az5"]["lifted"] = Scram.holding() is None
    seen["az5"]["scram_rows"] = host.Setting.objects.filter(key="scram").count()  # no echo rows

    # 3. This project's scram shows on memory-lane's page as its own AZ5 does.
    raise_scram("ops", "deploy went wrong")
    seen["scram_here"] = {
        "page_raised": page.scram(),
        "az5_rows": host.Setting.objects.filter(key="scram").count(),
    }
    lift_scram("ops")
    seen["scram_here"]["page_lifted"] = page.scram()

    # 4. The menus here write memory-lane's rows (and no Steer row); widening needs a granter.
    client = Client(HTTP_HOST=HOST)
    client.force_login(person)
    answer = client.post(
        "/runner/api/motions/lobby/steer/",
        json.dumps({"agent": "magent", "setting": "listening", "value": "off"}),
        content_type="application/json",
        secure=True,
    )
    newest = (
        host.Setting.objects.filter(key="listening", mood=lobby, agent_id="magent")
        .order_by("-created_at")
        .first()
    )
    menus = client.get("/runner/api/motions/lobby/steer/", secure=True).json()
    visitor_client = Client(HTTP_HOST=HOST)
    visitor_client.force_login(get_user_model().objects.get(username="visitor"))
    widening = visitor_client.post(
        "/runner/api/motions/lobby/steer/",
        json.dumps({"agent": "magent", "setting": "model", "value": "opus"}),
        content_type="application/json",
        secure=True,
    )
    seen["menus"] = {
        "status": answer.status_code,
        "host_row": [newest.value, newest.set_by_id] if newest else None,
        "steer_rows": Steer.objects.count(),
        "menus_listening": next(a["listening"] for a in menus["agents"] if a["name"] == "magent"),
        "menus_changes": [c["text"] for c in menus["changes"]][:3],
        "widening_by_password": widening.status_code,
        "model_rows": host.Setting.objects.filter(key="model").count(),
    }

    # 5. Listening off (set here, in memory-lane's row): a mention is held and memory-lane's page
    # shows the hold; memory-lane's page turning it back on wakes it at once.
    held_post = host_post(lobby, justin, "@magent when you are back: the list")
    seen["hold"] = {"mention": mention_status(held_post, magent), "page": sorted(page.held_in("lobby"))}
    setting(
        "listening",
        {"mode": "on", "until": None},
        mood=lobby,
        agent=host.ThinkingEntity.objects.get(name="magent"),
        by=justin,
    )
    seen["hold"]["after_on"] = mention_status(held_post, magent)

    # 6. Trust: a widening row counts only when set by someone here who may grant full tools.
    agent_entity = host.ThinkingEntity.objects.get(name="magent")
    setting("model", "haiku", mood=porch, agent=agent_entity, by=visitor)
    seen["trust"] = {"by_visitor": steering_for("porch", magent.pk).model}
    setting("model", "sonnet", mood=porch, agent=agent_entity, by=justin)
    setting("discretion", "chatty", mood=porch, agent=agent_entity, by=visitor)
    porch_steering = steering_for("porch", magent.pk)
    seen["trust"].update(by_justin=porch_steering.model, chatty_by_visitor=porch_steering.discretion)

    # 7. The most specific slot wins whatever its age, as memory-lane's resolve() says.
    setting("verbosity", "brief", mood=porch, agent=agent_entity, by=justin)
    setting("verbosity", "thorough", mood=porch, by=justin)
    seen["precedence"] = steering_for("porch", magent.pk).verbosity
    # 8. A row for every Mood at once counts everywhere and is said in no thread.
    lines_before = Message.objects.filter(kind=Kind.WAKE).count()
    setting("discretion", "reserved", by=justin)
    seen["every_mood"] = {
        "lobby": steering_for("lobby", magent.pk).discretion,
        "porch": steering_for("porch", magent.pk).discretion,  # its own (Mood, agent) row stands
        "lines_said": Message.objects.filter(kind=Kind.WAKE).count() - lines_before,
    }
    seen["considerations"] = Consideration.objects.count()
    seen["ultracode"] = ultracode(record, lobby, porch, magent, agent_entity, justin, visitor, client)
    seen["timing"] = timing(record, lobby, magent, agent_entity, justin, visitor, client, visitor_client)
    return seen


def ultracode(record, lobby, porch, magent, agent_entity, justin, visitor, client) -> dict:
    """9. memory-lane's `ultracode` row is the steer setting here (widening: a granter's only);
    the menus' ultracode is memory-lane's row."""
    session = client.session
    session["sign_in"] = "ssh"  # justin signed in with his key: he may widen from here
    session.save()
    setting("ultracode", True, mood=porch, agent=agent_entity, by=visitor)
    by_visitor = steering_for("porch", magent.pk).ultracode
    setting("ultracode", True, mood=porch, agent=agent_entity, by=justin)
    by_justin = steering_for("porch", magent.pk).ultracode
    answer = client.post(
        "/runner/api/motions/lobby/steer/",
        json.dumps({"agent": "magent", "setting": "ultracode", "value": "on"}),
        content_type="application/json",
        secure=True,
    )
    newest = host.Setting.objects.filter(key="ultracode", mood=lobby).order_by("-created_at").first()
    return {
        "by_visitor": by_visitor,
        "by_justin": by_justin,
        "said": list(
            record.motion_for_mood(porch)
            .messages.filter(text__contains="ultracode")
            .values_list("text", flat=True)
        ),
        "menus_status": answer.status_code,
        "menus_row": [newest.value, newest.set_by_id, newest.agent_id] if newest else None,
        "lobby": steering_for("lobby", magent.pk).ultracode,
        "steer_rows": Steer.objects.count(),
    }


def timing(record, lobby, magent, agent_entity, justin, visitor, client, visitor_client) -> dict:
    """10. memory-lane's consider_after, idle_after and considers_per_hour rows are the Motion's
    debounce, unprompted looks and considerations per hour here; the timing API writes them."""
    from wakes.models import DialOverride
    from wakes.models.in_force import resolve

    far = timezone.now() + timedelta(days=1)
    waiting = ListenState.objects.filter(motion_id="lobby").update(due_at=far)
    setting("consider_after", 40, mood=lobby, by=justin)
    seen_now = {
        "looked_again": waiting > 0
        and not ListenState.objects.filter(motion_id="lobby", due_at=far).exists(),
        "said": list(
            record.motion_for_mood(lobby)
            .messages.filter(text__contains="debounce")
            .values_list("text", flat=True)
        ),
    }
    setting("idle_after", 600, mood=lobby, agent=agent_entity, by=justin)
    setting("considers_per_hour", 2, mood=lobby, by=justin)
    setting("considers_per_hour", 30, mood=lobby, agent=agent_entity, by=visitor)  # not a granter
    dials = resolve("lobby", magent.pk)
    seen = {"resolved": [dials.quiet_seconds, dials.idle_looks, dials.considerations_per_hour], **seen_now}
    seen["said_of_visitors_row"] = list(
        record.motion_for_mood(lobby).messages.filter(text__contains="visitor").values_list("text", flat=True)
    )
    seen["porch"] = [
        resolve("porch", magent.pk).quiet_seconds,
        resolve("porch", magent.pk).considerations_per_hour,
    ]
    seen["api_read"] = client.get("/runner/api/motions/lobby/timing/", secure=True).json()["motion"]

    def post(who, knob, value):
        return who.post(
            "/runner/api/motions/lobby/timing/",
            json.dumps({"knob": knob, "value": value}),
            content_type="application/json",
            secure=True,
        )

    answer = post(client, "quiet_seconds", "25")
    newest = host.Setting.objects.filter(key="consider_after", mood=lobby).order_by("-created_at").first()
    seen["api_write"] = {
        "status": answer.status_code,
        "row": [newest.value, newest.set_by_id, newest.agent_id] if newest else None,
        "resolved": resolve("lobby", magent.pk).quiet_seconds,
        "overrides": DialOverride.objects.count(),
    }
    looks = post(client, "idle_looks", "100")
    idle = (
        host.Setting.objects.filter(key="idle_after", mood=lobby, agent=None).order_by("-created_at").first()
    )
    seen["api_write"]["idle_after_row"] = [looks.status_code, idle.value if idle else None]
    seen["refused"] = {
        "fraction": post(client, "quiet_seconds", "2.5").status_code,
        "past_its_bounds": post(client, "considerations_per_hour", "90").status_code,
        "by_password": post(visitor_client, "quiet_seconds", "5").status_code,
        "rows": host.Setting.objects.filter(key__in=("consider_after", "considers_per_hour")).count(),
    }
    blank = post(client, "considerations_per_hour", "")
    newest = host.Setting.objects.filter(key="considers_per_hour", mood=lobby).order_by("-created_at").first()
    seen["back_to_default"] = [blank.status_code, newest.value, newest.agent_id]
    seen["global"] = global_budget(client)
    return seen


def global_budget(client) -> dict:
    """memory-lane's global consider_usd_per_day is the daily budget here, both ways."""
    from wakes.models import Dials
    from wakes.models.in_force import resolve

    agent = Agent.objects.get(name="magent")
    justin = host.ThinkingEntity.objects.get(name="justin")
    setting("consider_usd_per_day", 4.5, by=justin)
    read = [str(limit) for scope, limit in resolve("lobby", agent.pk).daily_caps if scope == "all"]
    get_user_model().objects.filter(username="justin").update(is_staff=True)  # only staff set it
    answer = client.post(
        "/runner/api/motions/lobby/timing/",
        json.dumps({"knob": "consider_usd_per_day", "value": "12.25"}),
        content_type="application/json",
        secure=True,
    )
    newest = host.Setting.objects.filter(key="consider_usd_per_day").order_by("-created_at").first()
    return {
        "read": read,
        "status": answer.status_code,
        "row": [newest.value, newest.set_by_id, newest.mood_id, newest.agent_id],
        "api": answer.json().get("consider_usd_per_day"),
        "dials_untouched": str(Dials.load().daily_budget_usd),
    }


if __name__ == "__main__":
    print(json.dumps(main(), default=str))
