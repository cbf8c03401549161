"""What the thread page is given to show: Markdown rendered and sanitized on the server, request
tags hidden, answered requests saying who and when, typing, and posts that a retry cannot double."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from html import unescape

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from motion_runner.models import Message, Turn
from motion_runner.thread.markup import html_for, render_markdown
from motion_runner.thread.request_tags import TAG
from tests.factories import AgentFactory, MessageFactory, MotionFactory, TurnFactory, UserFactory
from wakes.models import TypingPing, WakeRequest
from wakes.turn.requests import answer, find_asks, record_requests

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "<svg onload=alert(1)>",
    '<iframe src="https://evil.example"></iframe>',
    "[click](javascript:alert(1))",
    '<a href="javascript:alert(1)">raw</a>',
]


def test_markdown_is_rendered_and_urls_become_links():
    html = render_markdown("**bold** and `code`, see https://example.org/a?b=1\n\n```\nx = 1\n```")

    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<pre><code>x = 1\n</code></pre>" in html
    assert '<a href="https://example.org/a?b=1" target="_blank" rel="noopener noreferrer nofollow">' in html


@pytest.mark.parametrize("hostile", HOSTILE)
def test_no_script_an_agent_writes_survives_rendering(hostile):
    html = render_markdown(f"look: {hostile}")

    tags = re.findall(r"<([a-z0-9]+)([^>]*)>", html)
    assert {name for name, _ in tags} <= {"p", "a"}, html
    assert not any(re.search(r"\son\w+\s*=", attributes) for _, attributes in tags), html
    assert not any("javascript:" in attributes.lower() for _, attributes in tags), html


def test_raw_html_is_shown_as_text_not_dropped():
    assert render_markdown("<b>hi</b>") == "<p>&lt;b&gt;hi&lt;/b&gt;</p>"


def reply_html(text: str) -> str | None:
    """As the thread shows an agent's reply in a turn."""
    return html_for("text", text, in_a_turn=True)


def test_a_request_tag_is_hidden_from_the_reply():
    html = reply_html('I need to run the tests. <tools to="run the test suite"/>')

    assert "tools" not in html
    assert html == "<p>I need to run the tests.</p>"


def shown(html: str) -> str:
    """The words a reader sees in a rendering: its HTML tags gone, its entities read."""
    return unescape(re.sub(r"<[^>]+>", "", html))


# --- issue 42 item 5: the thread hides a request tag only where it makes a card ------------------

NO_CARD = {
    "autolink": '<https://example.com/<tools to="wipe the disk"/>>',
    "bare-url": 'Go to https://example.com/?next=<deploy to="production"/> and look.',
    "mailto": '<mailto:ops@example.com?subject=<merge to="PR 9"/>>',
    "split-over-a-line-break": '<tools\nto="wipe the disk"/>',
}


@pytest.mark.parametrize("text", NO_CARD.values(), ids=NO_CARD.keys())
def test_a_tag_that_makes_no_card_is_shown_as_written(text):
    assert find_asks(text) == []
    assert shown(reply_html(text)) == text


def test_a_tag_shown_as_code_is_kept_in_its_code():
    html = reply_html('The syntax is `<tools to="x"/>`.')

    assert html == '<p>The syntax is <code>&lt;tools to="x"/&gt;</code>.</p>'


def test_beside_an_address_a_tag_that_makes_a_card_is_still_hidden():
    text = 'See <https://example.com/> then <merge to="PR 5"/>'

    assert [ask.kind for ask in find_asks(text)] == ["merge"]
    assert shown(reply_html(text)) == "See https://example.com/ then"


@pytest.mark.parametrize(
    "text",
    [
        '<tools to="x"/>',
        "<MERGE to='main' />",
        '<deploy to = "prod">',
        'Ask: <tools to="run it"/>, not `<merge to="PR 1"/>`.',
        'He wrote:\n> <tools to="wipe the disk"/>\nI will not.',
        'For example:\n```\n<deploy to="production"/>\n```\nNow <merge to="PR 2"/>',
        'See [<tools to="x"/>](https://example.com/page) and \\<merge to="PR 3"/>.',
        'Notes <!-- <deploy to="production"/> --> end. <tools to="tests"/>',
        *NO_CARD.values(),
    ],
)
def test_the_thread_hides_exactly_the_tags_that_make_cards(text):
    hidden = len(TAG.findall(text)) - len(TAG.findall(shown(reply_html(text))))

    assert hidden == len(find_asks(text))


@pytest.fixture
def harbor():
    return MotionFactory(slug="harbor", title="Harbor")


def messages(client, motion, **params):
    response = client.get(f"/api/motions/{motion.slug}/messages/", params)
    assert response.status_code == 200, response.content
    return response.json()


@pytest.mark.django_db
def test_a_post_comes_with_its_html(harbor, person_signed_in_with_ssh):
    MessageFactory(motion=harbor, text="**ship it**")

    (row,) = messages(person_signed_in_with_ssh, harbor)["results"]

    assert row["html"] == "<p><strong>ship it</strong></p>"


@pytest.mark.django_db
def test_the_api_shows_a_tag_inside_an_address_and_hides_the_one_that_made_a_card(
    harbor, person_signed_in_with_ssh
):
    turn = TurnFactory(motion=harbor, agent=AgentFactory(name="claude"), status="finished")
    MessageFactory(
        motion=harbor,
        agent=turn.agent,
        sender="claude",
        source="runner",
        turn=turn,
        text='Go to https://example.com/?next=<deploy to="production"/> and look.\n\n<merge to="PR 5"/>',
    )
    record_requests(sender=Turn, turn=turn)

    reply, card = messages(person_signed_in_with_ssh, harbor)["results"]

    assert shown(reply["html"]) == 'Go to https://example.com/?next=<deploy to="production"/> and look.'
    assert (card["kind"], card["tool_name"], card["text"]) == ("request", "merge", "PR 5")


@pytest.mark.django_db
def test_only_a_reply_in_a_turn_hides_its_tag_a_post_or_a_thought_shows_it(harbor, person_signed_in_with_ssh):
    """Cards come only from the replies of a turn: the same tag in a person's post, a thinking step
    or a watched page's line makes none, so there it is shown as written."""
    tag = '<tools to="run the tests"/>'
    turn = TurnFactory(motion=harbor, agent=AgentFactory(name="claude"), status="finished")
    claude = {"sender": "claude", "agent": turn.agent, "source": "runner", "turn": turn}
    MessageFactory(motion=harbor, text=f"Agents ask like this: {tag}")  # justin's post
    MessageFactory(motion=harbor, kind="watch", source="watch", sender="watch", text=f"The page says {tag}")
    MessageFactory(motion=harbor, kind="thinking", text=f"I could ask: {tag}", **claude)
    MessageFactory(motion=harbor, text=f"Asking. {tag}", **claude)
    record_requests(sender=Turn, turn=turn)

    rows = messages(person_signed_in_with_ssh, harbor)["results"]

    assert [(row["kind"], shown(row["html"]) if row["html"] else row["text"]) for row in rows] == [
        ("text", f"Agents ask like this: {tag}"),
        ("watch", f"The page says {tag}"),
        ("thinking", f"I could ask: {tag}"),
        ("text", "Asking."),
        ("request", "run the tests"),
    ]


@pytest.mark.django_db
def test_tool_calls_get_no_html_they_are_shown_as_text(harbor, person_signed_in_with_ssh):
    MessageFactory(motion=harbor, kind="tool_call", text="<b>Bash</b>", tool_name="Bash")

    (row,) = messages(person_signed_in_with_ssh, harbor)["results"]

    assert row["html"] is None


@pytest.mark.django_db
def test_a_turns_messages_say_why_it_woke(harbor, person_signed_in_with_ssh):
    turn = TurnFactory(motion=harbor, reason="compact", reason_detail="the session grew past 150k tokens")
    MessageFactory(motion=harbor, turn=turn, sender=turn.agent.name, source="runner", text="summary")

    (row,) = messages(person_signed_in_with_ssh, harbor)["results"]

    assert (row["turn_reason"], row["turn_reason_detail"]) == ("compact", "the session grew past 150k tokens")


@pytest.mark.django_db
def test_an_answered_request_says_who_answered_and_when(harbor, person_signed_in_with_ssh):
    agent = AgentFactory(name="claude")
    card = MessageFactory(
        motion=harbor, agent=agent, sender="claude", kind="request", tool_name="merge", text="main"
    )
    request = WakeRequest.objects.create(motion=harbor, agent=agent, message=card, kind="merge", to="main")
    answer(request.pk, person_signed_in_with_ssh.person, WakeRequest.Status.DONE, "ssh")

    (row,) = messages(person_signed_in_with_ssh, harbor)["results"]

    assert row["request"]["status"] == "done"
    assert row["request"]["decided_by"] == "justin"
    request.refresh_from_db()  # the moment, as the API gives every time: ISO 8601 in TIME_ZONE
    decided_at = row["request"]["decided_at"]
    assert datetime.fromisoformat(decided_at) == request.decided_at
    assert decided_at == timezone.localtime(request.decided_at).isoformat().replace("+00:00", "Z")


@pytest.mark.django_db
def test_every_viewer_sees_who_else_is_typing(harbor, person_signed_in_with_ssh):
    TypingPing.objects.create(motion=harbor, who="maria", at=timezone.now())
    TypingPing.objects.create(motion=harbor, who="justin", at=timezone.now())

    another_reader = APIClient()
    another_reader.force_authenticate(UserFactory(username="ann"))
    assert messages(person_signed_in_with_ssh, harbor)["typing"] == ["maria"]
    assert messages(another_reader, harbor)["typing"] == ["justin", "maria"]


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_answers_when_someone_else_starts_typing(harbor, person_signed_in_with_ssh):
    import threading
    import time

    MessageFactory(motion=harbor, text="first")
    cursor = messages(person_signed_in_with_ssh, harbor)["next"]

    maria = APIClient()
    maria.force_authenticate(UserFactory(username="maria"))

    from motion_runner.thread.bell import bell

    def someone_types():
        deadline = time.monotonic() + 60  # once the reader waits (an event, not a fixed time)
        while not bell.waiting(harbor.pk) and time.monotonic() < deadline:
            time.sleep(0.01)
        maria.post(f"/api/motions/{harbor.slug}/typing/")

    typist = threading.Thread(target=someone_types)
    typist.start()
    answered = messages(person_signed_in_with_ssh, harbor, after=cursor, wait=25)
    typist.join()

    # Answered by the ping: at the end of the wait her ping (6 s) would have lapsed.
    assert answered["typing"] == ["maria"]


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_answers_at_once_when_someone_began_typing_before_it(harbor, person_signed_in_with_ssh):
    # Her ping landed between the reader's last answer (which showed nobody typing) and this poll.
    MessageFactory(motion=harbor, text="first")
    cursor = messages(person_signed_in_with_ssh, harbor)["next"]
    TypingPing.objects.create(motion=harbor, who="maria", at=timezone.now())

    answered = messages(person_signed_in_with_ssh, harbor, after=cursor, wait=25, typing="")

    # At once: at the end of the wait her ping (6 s) would have lapsed.
    assert answered["typing"] == ["maria"]


@pytest.mark.django_db(transaction=True)
def test_a_long_poll_answers_when_someone_shown_typing_stops(harbor, person_signed_in_with_ssh):
    import threading
    import time

    from motion_runner.thread.bell import bell

    MessageFactory(motion=harbor, text="first")
    maria = APIClient()
    maria.force_authenticate(UserFactory(username="maria"))
    maria.post(f"/api/motions/{harbor.slug}/typing/")
    shown = messages(person_signed_in_with_ssh, harbor)
    assert shown["typing"] == ["maria"]

    def she_stops():
        deadline = time.monotonic() + 60  # once the reader waits (an event, not a fixed time)
        while not bell.waiting(harbor.pk) and time.monotonic() < deadline:
            time.sleep(0.01)
        maria.delete(f"/api/motions/{harbor.slug}/typing/")
        # A reader still waiting long after her stop is answered by her next post instead.
        deadline = time.monotonic() + 20
        while bell.waiting(harbor.pk) and time.monotonic() < deadline:
            time.sleep(0.01)
        if bell.waiting(harbor.pk):
            maria.post(f"/api/motions/{harbor.slug}/messages/", {"text": "too late"}, format="json")

    typist = threading.Thread(target=she_stops)
    typist.start()
    answered = messages(person_signed_in_with_ssh, harbor, after=shown["next"], wait=25, typing="maria")
    typist.join()

    assert answered["typing"] == [] and answered["results"] == []


@pytest.mark.django_db
def test_posting_twice_with_one_client_id_makes_one_message(harbor, person_signed_in_with_ssh):
    client_id = str(uuid.uuid4())
    url = f"/api/motions/{harbor.slug}/messages/"

    first = person_signed_in_with_ssh.post(url, {"text": "deploy?", "id": client_id}, format="json")
    second = person_signed_in_with_ssh.post(url, {"text": "deploy?", "id": client_id}, format="json")

    assert (first.status_code, second.status_code) == (201, 200)
    assert Message.objects.filter(motion=harbor).count() == 1
    assert second.json()["id"] == client_id


@pytest.mark.django_db
def test_a_client_id_someone_else_used_is_a_conflict(harbor, person_signed_in_with_ssh):
    theirs = MessageFactory(motion=harbor, sender="maria", text="mine")

    response = person_signed_in_with_ssh.post(
        f"/api/motions/{harbor.slug}/messages/", {"text": "hijack", "id": str(theirs.pk)}, format="json"
    )

    assert response.status_code == 409
    assert Message.objects.get(pk=theirs.pk).text == "mine"


def test_a_line_break_typed_in_a_post_is_kept():
    # Issue 25: Shift+Enter's line breaks vanished when the post was shown.
    assert (
        render_markdown("the van is packed\nthe merch too") == "<p>the van is packed<br>\nthe merch too</p>"
    )


# --- the render's work is bounded: a text that would cost far more than prose of its length is
# shown plain (escaped by the page, every character kept), counted in the parser's steps ----------

# 19,990 characters each, under THREAD_MARKDOWN_MAX_CHARS: the shapes a hostile post repeats to make
# the parser work hardest (each costs several times prose of its length; the openers, far more).
PATHOLOGICAL = {
    "image openers": "![",
    "link openers": "[",
    "unclosed links": "[a](",
    "emphasis run": "*a",
    "strikethrough run": "~~a",
    "entities": "&#1;",
    "tiny list items": "- a\n",
    "tiny headings": "# a\n",
    "tiny paragraphs": "a\n\n",
    "table of tiny rows": "|a|b|\n|-|-|\n",
}


@pytest.mark.parametrize("unit", PATHOLOGICAL.values(), ids=PATHOLOGICAL.keys())
def test_a_pathological_text_takes_the_plain_path_after_a_bounded_amount_of_work(unit):
    from motion_runner.thread import markup

    text = unit * (19_990 // len(unit))
    html, work = markup.render_metered(text)

    assert html is None
    assert work <= markup.work_budget(text) + markup.WORK_OVERSHOOT


@pytest.mark.parametrize("name", ["README.md", "docs/security.md", "docs/memory-lane.md", "bench/README.md"])
def test_long_ordinary_markdown_is_rendered_within_its_budget(name):
    from motion_runner.thread import markup
    from tests.paths import ROOT

    text = (ROOT / name).read_text()[:20_000]
    html, work = markup.render_metered(text)

    assert html is not None and "<p>" in html
    assert work <= markup.work_budget(text) / 2  # half the budget or less: room for denser prose


def test_the_parser_steps_are_counted_where_the_costly_constructs_are_parsed():
    """The meter sits in markdown-it's rules and its lookahead (`skipToken`): if an upgrade
    moved them, link openers would cost as little as prose and this would say so."""
    from motion_runner.thread import markup

    _, openers = markup.render_metered("[" * 2_000)
    _, prose = markup.render_metered("a" * 2_000)

    assert openers > 20 * prose


def test_the_plain_answer_is_kept_like_a_rendering_so_a_cold_read_does_not_parse_again(monkeypatch):
    from motion_runner.thread import markup

    parsed = []
    real = markup.render_metered
    monkeypatch.setattr(markup, "render_metered", lambda text: parsed.append(text) or real(text))
    text = "![" * 9_000 + str(uuid.uuid4())

    assert markup.html_for("text", text) is None
    markup.render_markdown.cache_clear()  # another process, or this one after a restart
    assert markup.html_for("text", text) is None
    assert parsed == [text]


# --- the shapes agents' replies take, after a line and after a blank line: rendered as plain
# markdown-it renders them (issue 43: the work meter had dropped each block rule's `alt`, so a list,
# fence, heading or quote directly under a line stayed part of the paragraph) ------------------------

REPLY_BLOCKS = {
    "bullet list": "- one\n- two\n- three",
    "bullet list with stars": "* one\n* two",
    "numbered list": "1. one\n2. two",
    "nested list": "- one\n  - one a\n  - one b\n- two",
    "list of bold items with code": "- **a**: `x = 1`\n- **b**: `y = 2`",
    "fence": "```\nx = 1\ny = 2\n```",
    "fence with a language": "```python\ndef f():\n    return 1\n```",
    "tilde fence": "~~~\nls -la\n~~~",
    "table": "| file | lines |\n|------|------:|\n| a.py | 12 |\n| b.py | 3 |",
    "heading": "## What I found",
    "heading level 3": "### Next steps",
    "quote": "> the tests pass\n> on main",
    "rule": "---",
}
LEADS = {"after a line": "Here's what I found:\n", "after a blank line": "Here's what I found:\n\n"}


def plain_markdown_it(text: str) -> str:
    """markdown-it-py as configured for the thread, unmetered, then cleaned as the thread cleans."""
    from markdown_it import MarkdownIt

    from motion_runner.thread import markup

    parser = MarkdownIt(
        "commonmark", {"linkify": True, "html": False, "typographer": False, "breaks": True}
    ).enable(["linkify", "table", "strikethrough"])
    return markup.clean(parser.render(text))


@pytest.mark.parametrize("lead", LEADS.values(), ids=LEADS.keys())
@pytest.mark.parametrize("block", REPLY_BLOCKS.values(), ids=REPLY_BLOCKS.keys())
def test_a_reply_shape_renders_as_plain_markdown_it_renders_it(block, lead):
    text = f"{lead}{block}\n\nThat's all."

    assert render_markdown(text) == plain_markdown_it(text)


@pytest.mark.parametrize("block", REPLY_BLOCKS.values(), ids=REPLY_BLOCKS.keys())
def test_a_reply_shape_on_its_own_renders_as_plain_markdown_it_renders_it(block):
    assert render_markdown(block) == plain_markdown_it(block)


def test_a_list_under_a_line_is_a_list_of_its_items():
    assert render_markdown("intro\n- one\n- two") == "<p>intro</p>\n<ul>\n<li>one</li>\n<li>two</li>\n</ul>"


def test_a_fence_under_a_sentence_is_a_code_block():
    html = render_markdown("Run this:\n```\nbin/test\n```")

    assert html == "<p>Run this:</p>\n<pre><code>bin/test\n</code></pre>"


def test_a_heading_under_a_line_is_a_heading():
    assert render_markdown("Done.\n## Next") == "<p>Done.</p>\n<h2>Next</h2>"


def test_a_quote_under_a_line_is_a_quote():
    assert (
        render_markdown("You said:\n> ship it")
        == "<p>You said:</p>\n<blockquote>\n<p>ship it</p>\n</blockquote>"
    )


def test_every_block_rule_keeps_the_rules_it_may_interrupt_once_metered():
    from markdown_it import MarkdownIt

    from motion_runner.thread import markup

    plain = MarkdownIt("commonmark").enable(["linkify", "table", "strikethrough"])
    metered = markup._markdown

    assert {r.name: r.alt for r in metered.block.ruler.__rules__} == {
        r.name: r.alt for r in plain.block.ruler.__rules__
    }
