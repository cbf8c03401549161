"""<tools/>, <merge/> and <deploy/>: asked by agents, answered only by people."""

from __future__ import annotations

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from motion_runner.models import Kind, Message, MotionSession, Turn
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import WakeRequest
from wakes.turn.footer import wake_footer
from wakes.turn.requests import find_asks, person_may_grant, record_requests

pytestmark = pytest.mark.django_db


@pytest.fixture
def motion():
    return MotionFactory(slug="repairs", title="Repairs")


@pytest.fixture
def look_only_turn(motion):
    agent = AgentFactory(name="magent")
    return TurnFactory(motion=motion, agent=agent, mode="look", status="finished")


def reply(turn, text):
    return MessageFactory(
        motion=turn.motion, agent=turn.agent, sender=turn.agent.name, source="runner", turn=turn, text=text
    )


def person(sign_in: str, username: str) -> APIClient:
    client = APIClient()
    client.force_login(UserFactory(username=username))
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    return client


def test_tags_are_found_with_either_quote_style():
    asks = find_asks("""I need to edit. <tools to="fix the typo in README"/> and <merge to='PR 12'/>""")
    assert [(a.kind, a.to) for a in asks] == [("tools", "fix the typo in README"), ("merge", "PR 12")]


def test_a_tools_ask_becomes_one_open_request_card(look_only_turn):
    reply(look_only_turn, '<tools to="fix the typo"/>')
    record_requests(sender=Turn, turn=look_only_turn)
    record_requests(sender=Turn, turn=look_only_turn)  # the signal delivered twice
    request = WakeRequest.objects.get()
    assert (request.kind, request.to, request.status) == ("tools", "fix the typo", "open")
    assert request.message.kind == "request"


def test_the_motion_shows_the_open_request_until_it_is_answered(motion, look_only_turn):
    reply(look_only_turn, '<tools to="fix the typo"/>')
    record_requests(sender=Turn, turn=look_only_turn)
    body = person("password", "reader").get(f"/api/motions/{motion.slug}/messages/").json()
    assert [r["kind"] for r in body["requests"]] == ["tools"]


def test_a_person_signed_in_with_an_ssh_key_grants_with_one_click(motion, look_only_turn):
    reply(look_only_turn, '<tools to="fix the typo"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    response = person("ssh", "justin").post(f"/api/requests/{request.pk}/grant/")
    assert response.status_code == 200, response.content
    request.refresh_from_db()
    woken = request.granted_turn
    assert request.status == "granted"
    assert (woken.mode, woken.reason, woken.agent) == ("full", "grant", look_only_turn.agent)
    assert "granted by justin" in woken.mode_rule
    assert woken.prompt.rstrip().endswith(wake_footer("full"))  # the full-tools footer is last
    assert "full tools" in woken.prompt.split("---")[-1]


def test_a_grant_says_in_the_thread_that_it_woke_the_agent_in_a_fresh_session(motion, look_only_turn):
    """The look-only turn that asked ran in a session that may hold untrusted input: the
    granted wake starts a fresh one (the default), and its wake line says so."""
    MotionSession.objects.create(
        session_id="asked-in-this-session", motion=motion, agent=look_only_turn.agent
    )
    Turn.objects.filter(pk=look_only_turn.pk).update(
        session_id="asked-in-this-session", mode_rule="a watch line"
    )
    reply(look_only_turn, '<tools to="fix the typo"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)

    person("ssh", "justin").post(f"/api/requests/{request.pk}/grant/")

    request.refresh_from_db()
    (line,) = Message.objects.filter(turn=request.granted_turn, kind=Kind.WAKE)
    assert line.text.startswith("@magent woke: full tools granted by justin (signed in with an SSH key)")
    assert "a fresh session, not asked-in…: a look-only wake" in line.text


def test_a_wiki_sign_in_is_refused_clearly_and_the_request_stays_open(look_only_turn):
    reply(look_only_turn, '<tools to="fix the typo"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    response = person("wiki", "wikifan").post(f"/api/requests/{request.pk}/grant/")
    assert response.status_code == 403
    assert "SSH key" in response.json()["error"]["detail"]
    request.refresh_from_db()
    assert request.status == "open" and not Turn.objects.filter(reason="grant").exists()


def test_an_outsider_cannot_answer(look_only_turn):
    reply(look_only_turn, '<deploy to="v2 to production"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    assert APIClient().post(f"/api/requests/{request.pk}/done/").status_code == 401


def test_a_merge_card_is_only_marked_by_a_person_and_wakes_nobody(look_only_turn):
    reply(look_only_turn, '<merge to="PR 12: the parser fix"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    response = person("wiki", "wikifan").post(f"/api/requests/{request.pk}/done/")
    assert response.status_code == 200
    request.refresh_from_db()
    assert request.status == "done" and request.granted_turn is None
    assert not Turn.objects.filter(reason="grant").exists()


def test_a_request_is_answered_once(look_only_turn):
    reply(look_only_turn, '<tools to="x"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    justin = person("ssh", "justin")
    assert justin.post(f"/api/requests/{request.pk}/grant/").status_code == 200
    second = justin.post(f"/api/requests/{request.pk}/grant/")
    assert second.status_code == 403 and "already granted" in second.json()["error"]["detail"]
    assert Turn.objects.filter(reason="grant").count() == 1


def test_the_card_in_the_thread_carries_its_request_id(motion, look_only_turn):
    reply(look_only_turn, '<tools to="x"/>')
    (request,) = record_requests(sender=Turn, turn=look_only_turn)
    reader = person("password", "reader")
    cards = reader.get(f"/api/motions/{motion.slug}/messages/", {"kind": "request"}).json()["results"]
    assert [c["request"] for c in cards] == [
        {"id": request.pk, "status": "open", "decided_by": None, "decided_at": None}
    ]


# --- issue 30, item 8: a card only from the agent's own words, in every form Markdown hides ------


@pytest.mark.parametrize(
    "text",
    [
        'He wrote:\n> first line of his\n<tools to="wipe the disk"/>',  # a lazy quote continuation
        '- > quoted in a list\n  <merge to="PR 9"/>',
        'Shown as \\<tools to="wipe the disk"/> in the docs.',  # a backslash-escaped tag
        'Notes <!-- <deploy to="production"/> --> end.',  # an HTML comment
        'Unclosed <!-- <tools to="x"/>',
        'See [<tools to="wipe the disk"/>](https://example.com/page).',  # a link's text
        'See [<merge to="PR 4"/>][ref] and the image ![<tools to="x"/>](a.png).',
    ],
    ids=["lazy-quote", "lazy-quote-in-list", "escaped", "comment", "open-comment", "link", "ref-and-image"],
)
def test_a_tag_hidden_by_markdown_makes_no_request_card(text):
    assert find_asks(text) == []


@pytest.mark.parametrize(
    "text",
    [
        '<details><summary>notes</summary>\n\n<tools to="wipe the disk"/>\n</details>',
        '<div>\n<tools to="wipe the disk"/>\n</div>',
        '<tools\nto="wipe the disk"/>',
        '<https://example.com/<tools to="wipe the disk"/>>',  # inside an autolink
        'Go to https://example.com/?next=<deploy to="production"/> and look.',  # a bare URL's
        '<mailto:ops@example.com?subject=<merge to="PR 9"/>>',
        'See www.example.com/<tools to="x"/> for it.',
        "[docs]: https://example.com/docs '<tools to=\"wipe the disk\"/>'",  # a link definition's title
    ],
    ids=[
        "details",
        "div-block",
        "split-over-a-line-break",
        "autolink",
        "bare-url",
        "mailto",
        "www",
        "definition",
    ],
)
def test_a_tag_no_person_would_see_makes_no_request_card(text):
    assert find_asks(text) == []


@pytest.mark.parametrize(
    "text, kind",
    [
        ('> someone said this\n\n<tools to="run the tests"/>', "tools"),  # a blank line ends the quote
        ('> quoted\n```\ncode\n```\n<merge to="PR 5"/>', "merge"),  # a fence ends it, and closes
        ('A backslash of its own \\\\<deploy to="staging"/>', "deploy"),  # an escaped backslash
        ('See [the docs](https://example.com) then <tools to="fix it"/>', "tools"),
        ('The page https://example.com/ <tools to="fix it"/>', "tools"),  # a space ends the URL
        ('<https://example.com/> then <merge to="PR 5"/>', "merge"),
    ],
    ids=[
        "after-blank",
        "after-fence",
        "escaped-backslash",
        "after-a-link",
        "after-a-url",
        "after-an-autolink",
    ],
)
def test_a_tag_in_the_agents_own_words_beside_markdown_is_still_a_request(text, kind):
    assert [ask.kind for ask in find_asks(text)] == [kind]


@override_settings(WAKE_FULL_TOOLS_FOR=["justin"])
def test_an_account_whose_name_differs_only_in_case_from_one_named_may_not_grant(db):
    assert person_may_grant(UserFactory(username="justin"), "password")[0]
    assert not person_may_grant(UserFactory(username="Justin"), "password")[0]


# --- a request card is made only from the agent's own words (issues 10 and 20) ------------------


@pytest.mark.parametrize(
    "text",
    [
        'He wrote:\n> <tools to="wipe the disk"/>\nI will not.',
        'The syntax is `<tools to="x"/>`.',
        'For example:\n```\n<deploy to="production"/>\n```',
    ],
)
def test_a_tag_quoted_or_shown_as_code_is_no_request(text):
    assert find_asks(text) == []


def test_a_tag_in_the_agents_own_words_is_still_a_request():
    asks = find_asks('Quoting `<tools/>` aside, <merge to="PR 12"/>')
    assert [(a.kind, a.to) for a in asks] == [("merge", "PR 12")]


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
