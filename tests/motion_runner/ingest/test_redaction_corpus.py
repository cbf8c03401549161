"""Issue 30, item 6: redaction measured on a corpus of secret shapes as tools print them, and on
ordinary tool output it must leave alone (redaction_corpus.py; bench/redaction.py prints the same
figures beside the old module's and detect-secrets')."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from motion_runner.ingest import redaction
from motion_runner.ingest.redaction import redact
from tests.motion_runner.ingest.redaction_corpus import ORDINARY_LINES, SECRETS

ITEM_6 = [secret for secret in SECRETS if secret.item6]


@pytest.mark.parametrize("secret", ITEM_6, ids=[secret.shape for secret in ITEM_6])
def test_each_shape_the_red_team_saw_stored_is_redacted(secret):
    assert not secret.leaked_in(redact(secret.line)), redact(secret.line)


def test_at_least_97_percent_of_the_corpus_is_redacted():
    missed = [secret.shape for secret in SECRETS if secret.leaked_in(redact(secret.line))]

    assert len(SECRETS) >= 100
    assert len(missed) <= 0.03 * len(SECRETS), missed


def test_at_most_one_line_of_ordinary_tool_output_in_a_hundred_is_altered():
    altered = [line for line in ORDINARY_LINES if redact(line) != line]

    assert len(ORDINARY_LINES) >= 2000
    assert len(altered) <= 0.01 * len(ORDINARY_LINES), altered[:20]


def test_a_leak_is_seen_in_any_piece_of_the_secret():
    """The measure itself: a mnemonic with one word left, or one line of a key block, leaks."""
    (mnemonic,) = [secret for secret in SECRETS if secret.shape == "mnemonic phrase, env"]
    first, *rest = mnemonic.secret.split()

    assert mnemonic.leaked_in(mnemonic.line.replace(" ".join(rest), "[REDACTED]"))
    assert not mnemonic.leaked_in(mnemonic.line.replace(mnemonic.secret, "[REDACTED]"))


SHORT_TEXTS = st.lists(st.sampled_from(redaction.LITERALS) | st.text(max_size=4), max_size=12).map("".join)


@settings(deadline=None)
@given(SHORT_TEXTS)
def test_a_short_text_is_found_to_hold_what_a_look_for_each_literal_finds(text):
    """A short text is looked at only for the literals whose first character it holds."""
    assert len(text) <= redaction.SHORT_TEXT
    assert redaction._literals_in(text) == {literal for literal in redaction.LITERALS if literal in text}
