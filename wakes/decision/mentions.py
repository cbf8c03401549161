"""@mentions, by memory-lane's rule.

`(?<![\\w@/.])@([A-Za-z][\\w.-]*)` matched after code spans and fenced blocks are removed, so
`me@magent.org` (an e-mail), `~/src/@magent` (a path) and `` `@magent` `` (code) are not
mentions. Names match known agents case-insensitively; a trailing `.` or `-` ("thanks @magent.")
is punctuation, not part of the name.
"""

from __future__ import annotations

import re

MENTION = re.compile(r"(?<![\w@/.])@([A-Za-z][\w.-]*)")
FENCED = re.compile(r"(^|\n)(```|~~~)[^\n]*\n.*?(\n\2[^\n]*(?=\n|$)|$)", re.DOTALL)
INLINE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)


def strip_code(text: str) -> str:
    return INLINE.sub(" ", FENCED.sub("\n", text))


def mentioned_names(text: str, known: list[str]) -> list[str]:
    """Known agent names mentioned in `text`, in order, each once, spelled as the agent is."""
    by_lower = {name.lower(): name for name in known}
    found: list[str] = []
    for match in MENTION.finditer(strip_code(text)):
        candidate = match.group(1)
        # "@magent." / "@magent-" at a sentence's end: try the name without trailing punctuation.
        for name in (candidate, candidate.rstrip(".-")):
            agent = by_lower.get(name.lower())
            if agent is not None:
                if agent not in found:
                    found.append(agent)
                break
    return found
