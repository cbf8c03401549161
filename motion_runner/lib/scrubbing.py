"""Taking words out of a copy (motion_runner/retract.py, and memory-lane's record under its binding):
pure text work, no database. A copy loses each line of what was said that is no longer said (a
line shorter than MIN_LINE is too common to scrub by, as memory-lane's retract judges), and a wake's
quote of the post (its `#m-<id>` header, its indented lines) loses all of it."""

from __future__ import annotations

import re
from typing import Any

MIN_LINE = 4
# A word of what was said that is a code, not prose: a door code, a pin, a key, a phone number.
CODE_WORD = re.compile(r"[^\s,;:!?()\[\]{}\"'`]*\d[^\s,;:!?()\[\]{}\"'`]*")


def gone_lines(old: str, new: str) -> list[str]:
    """The lines of what was said that what is said now does not keep, longest first."""
    kept = {line.strip() for line in (new or "").splitlines()}
    lines = {
        line.strip()
        for line in (old or "").splitlines()
        if len(line.strip()) >= MIN_LINE and line.strip() not in kept
    }
    return sorted(lines, key=lambda line: (-len(line), line))


def codes_in(lines: list[str]) -> list[str]:
    """The codes in what was said (words with a digit, MIN_LINE characters or more, without the
    sentence's end): what a note written from it keeps when it keeps anything of it word for word."""
    found = {
        word.rstrip(".")
        for line in lines
        for word in CODE_WORD.findall(line)
        if len(word.rstrip(".")) >= MIN_LINE
    }
    return sorted(found, key=lambda word: (-len(word), word))


def scrub(value: Any, lines: list[str], mark: str) -> Any:
    """`value` (text, or JSON of lists and dicts) with every line in `lines` replaced by `mark`."""
    if isinstance(value, str):
        for line in lines:
            value = value.replace(line, mark)
        return value
    if isinstance(value, list):
        return [scrub(item, lines, mark) for item in value]
    if isinstance(value, dict):
        return {key: scrub(item, lines, mark) for key, item in value.items()}
    return value


def quote_header(message_id: Any) -> str:
    """How a wake's quote names a post (wakes/decision/quoting.py `quote`)."""
    return f", #m-{message_id}]"


def scrub_quote(prompt: str, header: str, mark: str) -> str:
    """The post's quote in a wake (a header line `[…, #m-<id>] first line`, every further line
    indented four spaces): its words replaced by `mark`."""
    if header not in prompt:
        return prompt
    out: list[str] = []
    inside = False
    for line in prompt.split("\n"):
        if inside and line.startswith("    "):
            continue
        inside = False
        at = line.find(header)
        if at >= 0 and line.lstrip(" ►").startswith("["):
            line = line[: at + len(header)] + " " + mark
            inside = True
        out.append(line)
    return "\n".join(out)


def scrub_all(value: Any, header: str, lines: list[str], mark: str) -> Any:
    """`scrub_quote` on every text in `value`, then `scrub`."""
    if isinstance(value, str):
        return scrub(scrub_quote(value, header, mark), lines, mark)
    if isinstance(value, list):
        return [scrub_all(item, header, lines, mark) for item in value]
    if isinstance(value, dict):
        return {key: scrub_all(item, header, lines, mark) for key, item in value.items()}
    return value
