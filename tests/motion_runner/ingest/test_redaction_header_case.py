"""Issue 30, item 15: the upper-case forms of the headers redaction promises (docs/security.md) are
pinned, so a case-blind match made case-sensitive is caught. The values are ones only the header
rules find (no token shape, no secret's name), so nothing else redacts them instead."""

from __future__ import annotations

import pytest

from motion_runner.ingest.redaction import MARK, redact

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "line, value",
    [
        ("COOKIE: theme=dark; lang=en-GB-x1", "lang=en-GB-x1"),
        ("SET-COOKIE: prefs=compact12; Path=/", "prefs=compact12"),
        ("Cookie: theme=dark; lang=en-GB-x1", "lang=en-GB-x1"),
        ("AUTHORIZATION: Bearer abcdefgh12345678", "abcdefgh12345678"),
        ("AUTHORIZATION: BASIC dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy"),
        ("authorization: token abcdefgh12345678", "abcdefgh12345678"),
        # Under 16 characters: only the scheme rule (redaction.AUTHORIZATION) finds it, so making
        # that one rule case-sensitive is caught too (the schemeless rule needs 16).
        ("AUTHORIZATION: BEARER abc12345xy", "abc12345xy"),
    ],
    ids=[
        "COOKIE",
        "SET-COOKIE",
        "Cookie",
        "AUTHORIZATION-Bearer",
        "AUTHORIZATION-BASIC",
        "lower-token",
        "AUTHORIZATION-short",
    ],
)
def test_a_header_is_redacted_in_upper_case_as_in_any_other(line, value):
    redacted = redact(line)

    assert value not in redacted
    assert MARK in redacted
    assert redacted.split(":")[0] == line.split(":")[0]  # the header's name stays, for the reader
