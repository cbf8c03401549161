"""The admin as the person who runs Motion Runner sees it: branded, named right, audit records
read-only, one Dials page, overrides where they apply, the ledger in dollars with totals, keys on
the Agent page, secrets masked once saved."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.test import Client
from django.utils import timezone

from motion_runner.models import Agent, AgentKey
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import Consideration, DialOverride, Dials, ListenState, Spend

pytestmark = pytest.mark.django_db


@pytest.fixture
def an_admin() -> Client:
    client = Client()
    client.force_login(UserFactory(username="ana", is_staff=True, is_superuser=True))
    return client


def test_the_admin_is_branded_as_motion_runner(an_admin):
    page = an_admin.get("/admin/").content.decode()

    assert "Motion Runner" in page
    assert "Django administration" not in page


def test_models_are_named_in_good_english(an_admin):
    page = an_admin.get("/admin/").content.decode()

    for name in ("Watches", "SSH keys", "Ledger"):
        assert f">{name}<" in page, name
    for wrong in ("Watchs", "Ssh keys", "Spends"):
        assert wrong not in page, wrong


@pytest.fixture
def records():
    turn = TurnFactory(cost_usd=Decimal("0.125"))
    message = MessageFactory(motion=turn.motion)
    spend = Spend.objects.create(
        kind="consideration", motion=turn.motion, agent=turn.agent, turn=turn, day=timezone.now().date(),
        at=timezone.now(), amount=Decimal("0.125"), settled=True,
    )  # fmt: skip
    state = ListenState.objects.create(motion=turn.motion, agent=turn.agent, created_at=timezone.now())
    consideration = Consideration.objects.create(
        state=state,
        motion=turn.motion,
        agent=turn.agent,
        kind="new_posts",
        claim_version=1,
        created_at=timezone.now(),
    )
    return {"turn": turn, "message": message, "spend": spend, "consideration": consideration}


@pytest.mark.parametrize(
    "model, url",
    [
        ("turn", "motion_runner/turn"),
        ("message", "motion_runner/message"),
        ("spend", "wakes/spend"),
        ("consideration", "wakes/consideration"),
    ],
)
def test_audit_records_can_be_read_but_not_made_or_edited(an_admin, records, model, url):
    record = records[model]

    assert an_admin.get(f"/admin/{url}/add/").status_code == 403
    page = an_admin.get(f"/admin/{url}/{record.pk}/change/")
    assert page.status_code == 200
    assert b'name="_save"' not in page.content
    assert an_admin.post(f"/admin/{url}/{record.pk}/change/", {}).status_code == 403


def test_the_dials_are_one_page_not_a_list(an_admin):
    response = an_admin.get("/admin/wakes/dials/")

    assert response.status_code == 302
    assert response["Location"] == f"/admin/wakes/dials/{Dials.load().pk}/change/"


def test_a_motions_overrides_are_on_its_page_and_blank_inherits(an_admin):
    MotionFactory(slug="harbor", title="Harbor")
    page = an_admin.get("/admin/motion_runner/motion/harbor/change/").content.decode()
    assert "a blank field inherits the global Dials" in page

    form = {
        "slug": "harbor",
        "title": "Harbor",
        "visibility": "signed_in",
        "created_at_0": "2026-11-30",
        "created_at_1": "12:00:00",
        "dial_overrides-TOTAL_FORMS": "1",
        "dial_overrides-INITIAL_FORMS": "0",
        "dial_overrides-0-daily_budget_usd": "3.50",
    }
    response = an_admin.post("/admin/motion_runner/motion/harbor/change/", form)

    assert response.status_code == 302, response.content.decode()[:2000]
    override = DialOverride.objects.get(motion_id="harbor")
    assert override.daily_budget_usd == Decimal("3.50") and override.quiet_seconds is None


def test_the_watch_form_asks_only_what_a_person_sets(an_admin):
    page = an_admin.get("/admin/watchlist/watch/add/").content.decode()

    assert 'name="target"' in page
    for internal in ("etag", "last_revision", "settings_hash", "claimed_until", "text_hash"):
        assert internal not in page, internal


def test_the_ledger_shows_dollars_totals_and_links_to_turns(an_admin, records):
    page = an_admin.get("/admin/wakes/spend/").content.decode()

    assert '<td class="field-cost">$0.1250</td>' in page
    assert "By day" in page and "By Motion" in page
    assert f'href="/admin/motion_runner/turn/{records["turn"].pk}/change/"' in page


def test_an_agents_keys_are_listed_and_made_on_its_page(an_admin):
    agent = AgentFactory(name="claude")
    AgentKey.objects.create(agent=agent, prefix="old1234", hashed="x" * 64, label="laptop")
    url = f"/admin/motion_runner/agent/{agent.pk}/change/"
    assert "old1234" in an_admin.get(url).content.decode()

    form = {"name": "claude", "harness": "claude-code", "env": "{}", "make_key": "on", "listening": "on"}
    form.update({"created_at_0": "2026-11-30", "created_at_1": "12:00:00"})
    form.update({"keys-TOTAL_FORMS": "1", "keys-INITIAL_FORMS": "1", "keys-0-id": str(agent.keys.get().pk)})
    form.update({"dial_overrides-TOTAL_FORMS": "0", "dial_overrides-INITIAL_FORMS": "0"})
    response = an_admin.post(url, form, follow=True)

    assert agent.keys.count() == 2
    shown = [str(m) for m in response.context["messages"]]
    assert any("copy it now" in m for m in shown), shown


def test_the_key_add_url_points_to_the_agent_page_instead_of_a_bare_403(an_admin):
    response = an_admin.get("/admin/motion_runner/agentkey/add/", follow=True)

    assert response.status_code == 200
    assert "A key is made on its agent" in response.content.decode()


def test_a_saved_secret_is_masked_and_kept_when_the_form_is_saved_again(an_admin):
    agent = AgentFactory(name="claude")
    agent.env = {"ANTHROPIC_API_KEY": "sk-ant-very-secret", "CLAUDE_CONFIG_DIR": "/srv/claude"}
    agent.save()
    url = f"/admin/motion_runner/agent/{agent.pk}/change/"

    page = an_admin.get(url).content.decode()
    assert "sk-ant-very-secret" not in page
    assert "/srv/claude" in page

    form = {"name": "claude", "harness": "claude-code", "listening": "on"}
    form.update({"created_at_0": "2026-11-30", "created_at_1": "12:00:00"})
    form["env"] = page.split('name="env"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]
    form.update({"keys-TOTAL_FORMS": "0", "keys-INITIAL_FORMS": "0"})
    form.update({"dial_overrides-TOTAL_FORMS": "0", "dial_overrides-INITIAL_FORMS": "0"})
    import html

    form["env"] = html.unescape(form["env"])
    response = an_admin.post(url, form)

    assert response.status_code == 302, response.content.decode()[:3000]
    assert Agent.objects.get(pk=agent.pk).env["ANTHROPIC_API_KEY"] == "sk-ant-very-secret"


def test_view_on_site_goes_both_ways(an_admin):
    MotionFactory(slug="harbor", title="Harbor")

    admin_page = an_admin.get("/admin/motion_runner/motion/harbor/change/").content.decode()
    thread = an_admin.get("/motions/harbor/").content.decode()

    assert "/admin/r/" in admin_page  # Django's "View on site" redirect to get_absolute_url
    assert an_admin.get(
        admin_page.split('href="/admin/r/', 1)[1].split('"')[0].join(["/admin/r/", ""])
    ).url.endswith("/motions/harbor/")
    assert 'href="/admin/motion_runner/motion/harbor/change/"' in thread


def test_people_who_are_not_staff_get_no_admin_link_on_the_thread():
    MotionFactory(slug="harbor", title="Harbor")
    reader = Client()
    reader.force_login(UserFactory(username="wiki-reader"))

    assert "/admin/motion_runner/motion/" not in reader.get("/motions/harbor/").content.decode()


# Issue 25: rows that are records are not added, edited in bulk or deleted by hand.
NO_ADD = {
    "listen states": "/admin/wakes/listenstate/",
    "mention wakes": "/admin/wakes/mentionwake/",
    "Motion sessions": "/admin/motion_runner/motionsession/",
    "transcript files": "/admin/motion_runner/transcriptfile/",
    "ledger": "/admin/wakes/spend/",
    "turns": "/admin/motion_runner/turn/",
}


@pytest.mark.parametrize("listing", list(NO_ADD))
def test_records_offer_no_add(an_admin, listing):
    path = NO_ADD[listing]

    assert an_admin.get(path).status_code == 200
    assert an_admin.get(path + "add/").status_code == 403
    assert f'href="{path}add/"' not in an_admin.get(path).content.decode()


@pytest.mark.parametrize("listing", ["ledger", "turns"])
def test_money_records_offer_no_delete_selected(an_admin, records, listing):
    page = an_admin.get(NO_ADD[listing]).content.decode()

    assert "delete_selected" not in page


def test_the_ledger_rows_cannot_be_deleted_one_by_one_either(an_admin, records):
    row = Spend.objects.first()

    assert an_admin.get(f"/admin/wakes/spend/{row.pk}/delete/").status_code == 403
    assert Spend.objects.filter(pk=row.pk).exists()


def test_beats_models_are_off_the_index(an_admin):
    page = an_admin.get("/admin/").content.decode()

    for model in ("Periodic tasks", "Intervals", "Crontabs", "Solar events", "Clocked"):
        assert model not in page, model
