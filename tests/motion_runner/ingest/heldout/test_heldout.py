"""Issue 42, "Done when" 2: the held-out corpus (build_corpus.py says where each shape comes from,
written by someone other than the rules' author) is >= 97 % redacted in posts, tool results and
thinking steps, and <= 0.1 % of its ordinary lines are touched. Measured as bench/
redaction_heldout.py measures it: through ClaudeCodeParser and fit_message, no database."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
_spec = importlib.util.spec_from_file_location("redaction_heldout", ROOT / "bench" / "redaction_heldout.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


@pytest.fixture(scope="module")
def figures():
    return bench.measure()


def test_the_corpus_is_as_large_as_the_issue_asks():
    assert len(bench.shapes()) >= 150
    assert len(bench.ordinary()) >= 100_000
    assert all(s["text"][s["start"] : s["end"]] == s["secret"] for s in bench.shapes())


def test_a_leak_is_seen_in_any_piece_of_the_secret():
    """The measure itself: a secret cut short, or one line of a key block left, still leaks."""
    secret = "correct horse battery staple"
    assert bench.leaked(secret, [("-N 'correct horse battery [REDACTED]'", None)])
    assert bench.leaked("AAAA\n" + "B" * 40, [("", {"x": "B" * 40})])
    assert not bench.leaked(secret, [("-N '[REDACTED]'", {"raw": "[REDACTED]"})])


@pytest.mark.parametrize("place", bench.PLACES)
def test_at_least_97_percent_of_the_shapes_are_kept_out(figures, place):
    got = figures[place]
    assert got["kept_out"] >= 0.97 * got["shapes"], got["missed"]


@pytest.mark.parametrize("place", bench.PLACES)
def test_at_most_one_ordinary_line_in_a_thousand_is_touched(figures, place):
    got = figures[place]
    assert got["touched"] <= 0.001 * got["ordinary"], got
