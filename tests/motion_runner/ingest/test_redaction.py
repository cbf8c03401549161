"""Issue 10, "redaction by default": secrets are taken out of what is stored and served, the
values configured in settings wherever they appear, and the shapes of keys and tokens."""

from __future__ import annotations

import copy
import json
import logging
from re import _parser  # the regex parser Python compiles with: its minimum match widths

import pytest
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from motion_runner.ingest import redaction
from motion_runner.ingest.fit import fit_message
from motion_runner.ingest.redaction import MARK, RedactingFormatter, Redactor, redact, redact_json
from motion_runner.models import Message, Turn
from motion_runner.runner.ending import fail_before_launch
from tests import recorded
from tests.factories import TurnFactory

pytestmark = pytest.mark.django_db

SESSION = recorded.session_id()
GITHUB_TOKEN = "ghp_" + "A1b2C3d4" * 5
PRIVATE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----"
)
DOTENV = "DATABASE_PASSWORD=hunter2Secret9\nDEBUG=true"


def stream_text(client, persona, text: str):
    events = copy.deepcopy(recorded.first_run())
    assistant = next(e for e in events if e.get("type") == "assistant")
    assistant["message"]["content"][0]["text"] = text
    return client.post(
        "/api/motions/harbor/stream/",
        {"harness": "claude-code", "session_id": SESSION, "events": events},
        content_type="application/json",
        **persona.headers,
    )


@pytest.mark.parametrize("secret", [GITHUB_TOKEN, PRIVATE_KEY, "hunter2Secret9", "sk-ant-api03-" + "x9" * 20])
def test_a_secret_an_agent_prints_is_neither_stored_nor_served(client, scribe, secret):
    stream_text(
        client, scribe, f"I found this:\n{GITHUB_TOKEN}\n{PRIVATE_KEY}\n{DOTENV}\nsk-ant-api03-{'x9' * 20}"
    )

    served = client.get("/api/motions/harbor/messages/", {"raw": "1"}, **scribe.headers).content.decode()
    stored = [str(row) for row in Message.objects.values_list("text", "raw")]

    assert secret not in served and MARK in served
    assert not any(secret in row for row in stored)


def test_a_value_configured_in_settings_is_redacted_whatever_its_shape(client, scribe, settings):
    settings.WAKES_SCREEN_API_KEY = "plain-screen-key-of-no-known-shape"

    stream_text(client, scribe, "the key is plain-screen-key-of-no-known-shape, see")

    assert not Message.objects.filter(text__contains="plain-screen-key").exists()


def test_the_rpc_urls_key_is_redacted_but_not_its_host(client, scribe, settings):
    settings.WATCH_ETH_RPC_URL = "https://mainnet.example.io/v3/0123456789abcdef0123456789abcdef"

    stream_text(client, scribe, "calling https://mainnet.example.io/v3/0123456789abcdef0123456789abcdef now")

    assert Message.objects.filter(text__contains="https://mainnet.example.io/[REDACTED]").exists()


@pytest.mark.parametrize(
    "text",
    [
        "password = form.cleaned_data['password']",
        '"input_tokens": 1234, "output_tokens": 56',
        "token_budget=compute_budget()",
        "api_key: ${ANTHROPIC_API_KEY}",
        "tx 0x" + "ab" * 32,
        '"@aws-sdk/credential-provider-node": "^3.972.94",',  # a package's version
        '"password": "signed in with a password",',  # a sentence about one
        'PASSWORD_REFUSED = "That username and password do not match."',
        "CACHE_KEY = 'motion:listen:%s'",  # a KEY that says no secret's kind
    ],
)
def test_code_and_counts_are_not_taken_for_secrets(text):
    assert redact(text) == text


def test_a_secret_in_a_harness_error_is_not_kept_on_the_turn_or_said_in_the_thread(harbor, scribe):
    turn = TurnFactory(motion=harbor, agent=scribe.agent, status="queued")

    fail_before_launch(turn, f"auth failed with Authorization: Bearer {GITHUB_TOKEN}")

    turn = Turn.objects.get(pk=turn.pk)
    assert GITHUB_TOKEN not in turn.error and MARK in turn.error
    assert not Message.objects.filter(text__contains=GITHUB_TOKEN).exists()


def test_the_configured_values_are_read_again_when_a_setting_changes(settings):
    """They are kept between calls (read once, not per string): a change must still count."""
    settings.WAKES_SCREEN_API_KEY = "first-screen-key-of-no-known-shape"
    assert redact("k=first-screen-key-of-no-known-shape.") == f"k={MARK}."

    settings.WAKES_SCREEN_API_KEY = "second-screen-key-of-no-known-shape"
    assert redact("first-screen-key-of-no-known-shape") == "first-screen-key-of-no-known-shape"
    assert redact("k=second-screen-key-of-no-known-shape.") == f"k={MARK}."

    settings.REDACT_SECRETS = False
    assert redact("second-screen-key-of-no-known-shape") == "second-screen-key-of-no-known-shape"


def test_redaction_can_be_turned_off_by_the_operator(settings):
    settings.REDACT_SECRETS = False

    assert redact(GITHUB_TOKEN) == GITHUB_TOKEN


def test_how_much_tool_output_a_reader_sees_is_a_dial(client, scribe, harbor, settings):
    from tests.factories import MessageFactory

    settings.THREAD_TOOL_RESULT_SHOWN_CHARS = 100
    MessageFactory(motion=harbor, kind="tool_result", text="line\n" * 1000, raw={"out": "line\n" * 1000})

    served = client.get("/api/motions/harbor/messages/", {"raw": "1"}, **scribe.headers).json()["results"]

    (result,) = [m for m in served if m["kind"] == "tool_result"]
    assert result["text"].startswith("line\n" * 20) and "4900 more characters not shown" in result["text"]
    assert result["raw"] is None


def test_a_secret_in_a_log_line_is_redacted(settings):
    settings.WAKES_SCREEN_API_KEY = "plain-screen-key-of-no-known-shape"
    record = logging.LogRecord(
        "wakes.turn.screen",
        logging.ERROR,
        __file__,
        1,
        "the screen refused key %s",
        (settings.WAKES_SCREEN_API_KEY,),
        None,
    )

    log_line = RedactingFormatter().format(record)

    assert "plain-screen-key-of-no-known-shape" not in log_line
    assert MARK in log_line


def test_the_standalone_sites_log_lines_pass_through_the_redacting_formatter(settings):
    handler = settings.LOGGING["handlers"]["console"]
    formatter = settings.LOGGING["formatters"][handler["formatter"]]
    assert formatter["()"] == "motion_runner.ingest.redaction.RedactingFormatter"


# --- the shortcuts of a batch's redaction (motion_runner/ingest/redaction.py: SHORTEST_SECRET, Redactor) ---


def test_no_shape_matches_fewer_characters_than_the_shortest_secret():
    """Strings shorter than SHORTEST_SECRET skip redaction unread: every shape must need at least
    that many characters (the regexes' own minimum widths, each with what must surround it)."""

    def shortest(pattern) -> int:
        return _parser.parse(pattern.pattern, pattern.flags).getwidth()[0]

    for literal, shape in redaction.TOKEN_SHAPES:
        assert shortest(shape) >= redaction.SHORTEST_SECRET, literal
    assert shortest(redaction.AUTHORIZATION) >= redaction.SHORTEST_SECRET
    assert shortest(redaction.URL_PASSWORD) + len("@") >= redaction.SHORTEST_SECRET  # (?=@) is not counted
    for shape in redaction.AROUND:  # the empty user's URL password (`://:b@`) ends in a look-ahead too
        assert shortest(shape.pattern) + len("@") >= redaction.SHORTEST_SECRET, shape.literals
    assert shortest(redaction.ENV_QUOTED) >= redaction.SHORTEST_SECRET
    shortest_word = min(len(start) for start in redaction.SECRET_WORD_STARTS)
    assert shortest_word + shortest(redaction.ASSIGNED_VALUE) >= redaction.SHORTEST_SECRET
    # The configured values are looked for from 8 characters on.
    assert redaction._configured(("x" * 7,)) is None and redaction._configured(("x" * 8,)) is not None
    assert redaction.SHORTEST_SECRET <= 8


@pytest.mark.parametrize(
    "secret, expected",
    [
        ("://:b@", f"://:{MARK}@"),  # 6: the shortest there is
        ("://a:b@", f"://a:{MARK}@"),
        ("token=abc12d", f"token={MARK}"),
        ("xoxa-0123456789", MARK),
    ],
)
def test_the_shortest_secrets_are_still_redacted(secret, expected):
    assert len(secret) >= redaction.SHORTEST_SECRET
    assert redact(secret) == expected


def test_a_batchs_redactor_answers_as_redact_does_each_string_once(settings, monkeypatch):
    settings.WAKES_SCREEN_API_KEY = "plain-screen-key-of-no-known-shape"
    strings = [GITHUB_TOKEN, PRIVATE_KEY, DOTENV, "plain-screen-key-of-no-known-shape", "user", "", "a" * 6]
    lines = [
        *recorded.first_run(),
        {"nested": [strings, {"again": strings, "n": 3, "none": None, "t": True}], "text": GITHUB_TOKEN},
        GITHUB_TOKEN,
        None,
        ["://a:b@", "://a:b"],
    ]
    expected = [redact_json(copy.deepcopy(line)) for line in lines]
    calls = []

    def counting(text: str) -> str:
        calls.append(text)
        return redact(text)

    monkeypatch.setattr(redaction, "redact", counting)
    redactor = Redactor()
    assert [redactor.redact_json(copy.deepcopy(line)) for line in lines] == expected
    assert len(calls) == len(set(calls))  # each distinct string once
    assert all(len(text) >= redaction.SHORTEST_SECRET for text in calls)

    settings.WAKES_SCREEN_API_KEY = "another-screen-key-of-no-known-shape"  # forgotten on a change
    assert redactor.redact("another-screen-key-of-no-known-shape") == MARK
    assert redactor.redact("plain-screen-key-of-no-known-shape") == "plain-screen-key-of-no-known-shape"


def test_a_fitted_message_is_the_same_with_or_without_the_batchs_redactor():
    redactor = Redactor()
    for event in recorded.first_run():
        raw = {"event": event, "said": f"I found {GITHUB_TOKEN} and {DOTENV}"}
        text = f"{GITHUB_TOKEN}\n{event.get('type')}"
        alone = fit_message(
            Message(motion_id="harbor", sender="x", source="api", text=text, raw=copy.deepcopy(raw))
        )
        batched = fit_message(
            Message(
                id=alone.id, motion_id="harbor", sender="x", source="api", text=text, raw=copy.deepcopy(raw)
            ),
            redactor,
        )
        assert (batched.text, batched.raw) == (alone.text, alone.raw)
        assert GITHUB_TOKEN not in batched.text and GITHUB_TOKEN not in str(batched.raw)


class Label(str):
    """A str subclass, as a TextChoices value is."""


def test_every_string_of_a_json_value_is_redacted_whatever_its_type():
    value = {"a": Label(GITHUB_TOKEN), "b": [1, 2.5, True, None, {"c": GITHUB_TOKEN, "d": [Label("user")]}]}

    assert redact_json(value) == {"a": MARK, "b": [1, 2.5, True, None, {"c": MARK, "d": ["user"]}]}
    assert Redactor().redact_json([GITHUB_TOKEN, Label(GITHUB_TOKEN)]) == [MARK, MARK]


def secret_words_by_finds(text: str) -> list[tuple[int, int]]:
    """_secret_words as it was before its one search for any keyword: every find, each matched."""
    lower = text.lower()
    found = {}
    for start in redaction.SECRET_WORD_STARTS:
        at = lower.find(start)
        while at != -1:
            if (word := redaction.SECRET_WORD.match(text, at)) is not None:
                found[at] = word.span()
            at = lower.find(start, at + 1)
    return [found[at] for at in sorted(found)]


# Keywords, their pieces and case, and the letters whose lower case changes the text's length or
# is an ASCII letter (İ, K the Kelvin sign): what a search of the lowered text must not miss.
PIECES = [*redaction.SECRET_WORD_STARTS, "TOKEN", "Pass", "word", "api_key", "İ", "K", "ſ", "s", "=", " "]
WORDY = st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=8).map("".join)


@given(WORDY)
def test_the_one_search_for_a_keyword_finds_what_the_finds_found(text):
    assert [word.span() for word in redaction._secret_words(text)] == secret_words_by_finds(text)


SECRETS_AND_NOT = st.sampled_from(
    [GITHUB_TOKEN, PRIVATE_KEY, DOTENV, "plain-screen-key-of-no-known-shape", "user", "", "a" * 6, "://a:b@"]
) | st.text(max_size=12)
JSON_WITH_SECRETS = st.recursive(
    st.none() | st.booleans() | st.integers() | SECRETS_AND_NOT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(SECRETS_AND_NOT, children, max_size=4),
    max_leaves=20,
)


@given(st.lists(JSON_WITH_SECRETS, max_size=6), st.integers(min_value=1, max_value=4))
def test_a_batchs_redactor_walks_to_what_redact_json_gives(values, remembered):
    """Redactor.redact_json's own walk (its look-ups inline), also when it forgets mid-batch."""
    with override_settings(WAKES_SCREEN_API_KEY="plain-screen-key-of-no-known-shape"):
        redactor = Redactor()
        redactor.MAX_REMEMBERED = remembered
        got = [redactor.redact_json(copy.deepcopy(value)) for value in values]
        assert json.dumps(got) == json.dumps([redact_json(copy.deepcopy(value)) for value in values])


def test_a_fitted_message_is_cut_at_the_limits_the_settings_give_now(settings):
    """fit_message reads the text limits once, and again whenever a setting changes."""

    def fitted(kind: str) -> str:
        message = Message(motion_id="harbor", sender="x", source="api", kind=kind, text="y" * 50, raw={})
        return fit_message(message).text

    assert fitted("text") == "y" * 50
    settings.MESSAGE_TEXT_MAX_CHARS = 20
    settings.MESSAGE_TOOL_RESULT_MAX_CHARS = 30
    assert fitted("text") == "y" * 20 + "\n… (30 more characters not kept)"
    assert fitted("tool_result") == "y" * 30 + "\n… (20 more characters not kept)"
