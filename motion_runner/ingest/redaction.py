"""Secrets taken out of what is stored and served: message text and raw lines, tool results,
a harness's stderr, errors.

Two layers. The values configured in settings (REDACT_SETTINGS names them) are replaced
wherever they appear, whatever their shape. Then shapes: tokens with a known prefix, private
key blocks, `Authorization:` headers, a URL's password, and `NAME=value` where the name says
secret, token, password or key and the value looks generated (a plain word or an identifier
is left alone, so code that says `password = form.password` survives). memory-lane's
conversations/services/redaction.py was the reference for which shapes matter.
"""

from __future__ import annotations

import copy
import logging
import math
import re
from collections import Counter
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.signals import setting_changed

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from . import redaction_shapes as _shapes

MARK = "[REDACTED]"

# The shapes (redaction_shapes.py): tokens with a known prefix, tried where their literal is in
# the text, and secrets known by what stands around them.
TOKEN_SHAPES = _shapes.TOKEN_SHAPES
AROUND = _shapes.AROUND
AUTHORIZATION = re.compile(
    r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}"
)
URL_PASSWORD = re.compile(r"(://[^\s:/@\"']+:)[^\s@/\"']+(?=@)")
# A URL whose user part is itself the key (a Sentry DSN: https://<32 hex>@o1.ingest.sentry.io/42).
URL_KEY_USER = re.compile(r"(://)[A-Za-z0-9_-]{16,}(?=@)")
# An environment line: an upper-case name that ends in a secret's word, `=`, a value, whatever the
# value looks like (`PGPASSWORD=correcthorse`). Code (`password = form.password`) is lower case.
# Found by the name's end (a literal the engine scans for quickly); the rest of the name is looked
# at only where one is found (_env_value).
ENV_ASSIGNMENT = re.compile(
    r"(?:PASS|PASSWD|PASSWORD|PWD|SECRET|TOKEN|KEY|KEYS|DSN|CREDENTIALS)(=[\"']?)([^\s\"'\\,;]{4,})"
)
ENV_WORDS = ("PASS", "PWD", "SECRET", "TOKEN", "KEY", "DSN", "CREDENTIALS")  # every name end above
# The same name with spaces around `=` or a `:`, its value quoted (`DB_PASSWORD = 'hunter two'`):
# a quoted literal is the value itself, spaces and all. A name ending in KEY must say which key
# (`CACHE_KEY = "motion:%s"` is a constant of code).
ENV_QUOTED = re.compile(
    r"(?:PASS|PASSWD|PASSWORD|PWD|SECRET|TOKEN|DSN|CREDENTIALS|MNEMONIC|PHRASE|"
    r"(?:API|SECRET|PRIVATE|ACCESS|AUTH|ENCRYPTION|SIGNING|MASTER|ACCOUNT)_?KEY)"
    r"\s*[:=]\s*([\"'])([^\"'\n]{4,200})\1"
)
ENV_QUOTED_WORDS = (*ENV_WORDS, "MNEMONIC", "PHRASE")
ENV_NAME_START = re.compile(r"[A-Z][A-Z0-9_]*\Z")
# A session cookie, in a header or alone. Each shape starts with a literal (the engine's fast
# search; a case-blind one was slow on code that says `session`, bench/README.md), and the letter
# before it, which must start a word, is looked at where one is found (_cookie_value).
COOKIE_HEADER = re.compile(r"((?:[Ss]et-|SET-)?(?:[Cc]ookie|COOKIE)\s*:\s*)[^\r\n\"]{4,}")
COOKIE_VALUE = r"=[^\s;\"',&]{8,}"
SESSION_COOKIES = [
    ("ession", "Ss", re.compile(r"ession(?:id|ID)?" + COOKIE_VALUE)),
    ("ESSION", "S", re.compile(r"ESSION(?:ID)?" + COOKIE_VALUE)),
    ("srftoken", "c", re.compile(r"srftoken" + COOKIE_VALUE)),
    ("SRFTOKEN", "C", re.compile(r"SRFTOKEN" + COOKIE_VALUE)),
]
# A name that says secret: found by its keyword, which must end a word (`input_tokens` and
# `tokenizer` are no secrets' names, `GITHUB_TOKEN` and `db_password` are).
SECRET_WORD = re.compile(
    r"(?i)secret|token|passw(?:or)?d|(?<![a-z])pass(?:phrase)?|api[_-]?key|private[_-]?key|access[_-]?key|credentials?|mnemonic"
)
# Where a keyword may start: found with str.find (fast), then matched there (anchored).
SECRET_WORD_STARTS = ("secret", "token", "pass", "api", "private", "access", "credential", "mnemonic")
# Any of them in the lowered text, in one search: most strings hold none (ids, names, times), and
# for those this one look is all _secret_words does, not eight finds.
ANY_SECRET_WORD_START = re.compile("|".join(map(re.escape, SECRET_WORD_STARTS)))
# After the keyword: the rest of the name (bounded), then `=` or `:`, then the value.
# A quoted value is taken whole, spaces and all (`password: "correct horse battery staple"`).
# Ruby's and PHP's `=>` only before a quoted value (`api_secret => '…'`; `a.py => b.py` is a rename).
ASSIGNED_VALUE = re.compile(
    r"[A-Za-z0-9_.-]{0,40}?[\"']?\s*(?:=>(?=\s*[\"'])|[:=])\s*"
    r"(?:([\"'])(?P<quoted>[^\"'\\\n]{6,200})\1|[\"']?(?P<bare>[^\s\"'\\,;(){}\[\]<>]{6,}))"
)
LOOKS_GENERATED = re.compile(r"\d|[+/=@#$%^&*!]|(?=.*[a-z])(?=.*[A-Z]).{16,}")
# Quoted words that are a sentence (a message about a password), not a passphrase: they name the
# secret, use the words prose cannot do without (none of them is a BIP-39 word), or end one.
PROSE = re.compile(
    r"(?i)\b(?:password|passwd|token|secret|key|the|and|not|that|this|with|you|your|is|are|of|to|for|an?)\b"
    r"|[.!?:]\s*$"
)
# A package's version (`"@aws-sdk/credential-provider-node": "^3.972.94"`) is no secret.
VERSION = re.compile(r"[~^<>=v]*[0-9]+(?:\.[0-9]+)+(?:[-+.][0-9A-Za-z.-]+)?(?:\s*(?:\|\||-|<|>)=?\s*\S+)*")
PLACEHOLDER = re.compile(
    r"(?i)^(?:your[-_].*|.*example.*|.*placeholder.*|\$\{?.*|\{\{.*|<.*|x+|\*+|changeme|redacted.*|\[redacted\].*)$"
)
HOST = re.compile(r"[^:\s]{1,253}")
# A token must start a word; an underscore before it still starts one (`x_ghp_…` is a GitHub token).
WORD_CHAR = re.compile(r"[A-Za-z0-9]")
# Nothing above matches fewer characters: a URL's password (`://:b@`) takes 6, a configured value
# 8, an assignment (`token=` and six characters) 12, a token shape 15. A shorter string (most of a
# harness line's: "user", "text", "off") is left as it is without a look. A new shape that can be
# shorter must lower this (tests/motion_runner/ingest/test_redaction.py checks the shortest of each).
SHORTEST_SECRET = 6


@cache
def _configured(values: tuple[str, ...]) -> re.Pattern | None:
    wanted = sorted({v for v in values if len(v) >= 8}, key=len, reverse=True)
    return re.compile("|".join(re.escape(v) for v in wanted)) if wanted else None


@cache
def _redaction_settings() -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """(REDACT_SECRETS, the configured secrets, those long enough to look for), read once.

    Every string of every stored line is redacted: the six settings are not read again for each
    one. Cleared whenever a
    setting changes (override_settings, pytest-django's `settings`)."""
    values = configured_secrets()
    return bool(settings.REDACT_SECRETS), values, tuple(v for v in values if len(v) >= 8)


def _forget_redaction_settings(**kwargs: Any) -> None:
    _redaction_settings.cache_clear()


setting_changed.connect(_forget_redaction_settings)


def configured_secrets() -> tuple[str, ...]:
    """The secret values in settings: each setting REDACT_SETTINGS names (a string, a URL's
    password, path and query, the passwords in a mapping of credentials, the keys of a mapping
    of keys (MOOD_RUNNER_KEYS), the values an environment mapping gives secret names
    (RUNNER_EXTRA_ENV), the databases' passwords (DATABASES))."""
    found: list[str] = []
    for name in settings.REDACT_SETTINGS:
        value = getattr(settings, name, None)
        if isinstance(value, str) and "://" in value:
            parts = urlsplit(value)
            found += [p for p in (parts.password, parts.path.strip("/"), parts.query) if p]
        elif isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found += _secrets_in_mapping(value)
        elif isinstance(value, list | tuple):  # SECRET_KEY_FALLBACKS
            found += [item for item in value if isinstance(item, str)]
    return tuple(v for v in found if isinstance(v, str))


def _secrets_in_mapping(value: dict) -> list[str]:
    found: list[str] = []
    for key, item in value.items():
        if isinstance(item, tuple | list) and len(item) == 2:  # {api: (username, password)}
            found.append(item[1])
        elif isinstance(item, dict) and isinstance(item.get("PASSWORD"), str):  # DATABASES
            found.append(item["PASSWORD"])
        elif isinstance(item, str) and (not key.isupper() or SECRET_WORD.search(key) or key.endswith("_KEY")):
            # {"agent name": "key"}; an environment's values only under a secret's name
            found.append(item)
    return found


# Every literal a shape is tried for, and the words of an environment line's name: which of
# them a text holds is found once (_literals_in) and each shape asks that set.
LITERALS = tuple(
    sorted(
        {literal for literal, _ in TOKEN_SHAPES}
        | {literal for shape in AROUND if not shape.lowered for literal in shape.literals}
        | set(ENV_QUOTED_WORDS)
    )
)
# The literals looked for in the lowered text (a vendor's name, in whatever case it is written).
LOWERED_LITERALS = tuple(sorted({literal for shape in AROUND if shape.lowered for literal in shape.literals}))
# A short text (most of a harness line's strings: ids, names, times) is looked at for the
# literals whose first character it holds: a handful, not all.
BY_FIRST: dict[str, tuple[str, ...]] = {}
for _literal in LITERALS:
    BY_FIRST[_literal[0]] = (*BY_FIRST.get(_literal[0], ()), _literal)
LOWERED_BY_FIRST: dict[str, tuple[str, ...]] = {}
for _literal in LOWERED_LITERALS:
    LOWERED_BY_FIRST[_literal[0]] = (*LOWERED_BY_FIRST.get(_literal[0], ()), _literal)
SHORT_TEXT = 256
assert not any(literal in MARK or literal in MARK.lower() for literal in (*LITERALS, *LOWERED_LITERALS))


def _literals_in(text: str) -> set[str]:
    if len(text) <= SHORT_TEXT:
        found = {
            literal for first in set(text) & BY_FIRST.keys() for literal in BY_FIRST[first] if literal in text
        }
        lower = text.lower()
        return found | {
            literal
            for first in set(lower) & LOWERED_BY_FIRST.keys()
            for literal in LOWERED_BY_FIRST[first]
            if literal in lower
        }
    lower = text.lower()
    return {literal for literal in LITERALS if literal in text} | {
        literal for literal in LOWERED_LITERALS if literal in lower
    }


def _tokens(text: str, present: set[str]) -> str:
    for literal, shape in TOKEN_SHAPES:
        if literal not in present:
            continue
        text = shape.sub(
            lambda m: m.group(0) if m.start() and WORD_CHAR.match(m.string, m.start() - 1) else MARK, text
        )
    return text


def _around(text: str, present: set[str]) -> str:
    for shape in AROUND:
        if not present.isdisjoint(shape.literals):
            for _ in range(3 if shape.again else 1):
                before = text
                text = shape.pattern.sub(lambda match, shape=shape: _around_value(match, shape), text)
                if text == before:
                    break
    return text


def _entropy(value: str) -> float:
    """Shannon entropy, bits a character (detect-secrets' measure of a generated string)."""
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def _around_value(match: re.Match, shape: _shapes.Around) -> str:
    start, end = match.span("v")
    value = match.group("v")
    if PLACEHOLDER.match(value) or (shape.generated and not LOOKS_GENERATED.search(value)):
        return match.group(0)
    if shape.entropy and _entropy(value) < shape.entropy:
        return match.group(0)
    text = match.string
    if shape.host_first and not HOST.fullmatch(text, text.rfind("\n", 0, match.start()) + 1, match.start()):
        return match.group(0)
    return text[match.start() : start] + MARK + text[end : match.end()]


def _secret_words(text: str) -> list[re.Match]:
    lower = text.lower()
    if ANY_SECRET_WORD_START.search(lower) is None:
        return []  # no find below would hit
    found: dict[int, re.Match] = {}
    for start in SECRET_WORD_STARTS:
        at = lower.find(start)
        while at != -1:
            if (word := SECRET_WORD.match(text, at)) is not None:
                found[at] = word
            at = lower.find(start, at + 1)
    return [found[at] for at in sorted(found)]


def _assignments(text: str) -> str:
    spans: list[tuple[int, int]] = []
    for word in _secret_words(text):
        if word.end() < len(text) and text[word.end()].isalpha():
            continue  # the keyword does not end a word
        if spans and word.start() < spans[-1][1]:
            continue
        assigned = ASSIGNED_VALUE.match(text, word.end())
        if assigned is None:
            continue
        group = "quoted" if assigned.group("quoted") is not None else "bare"
        value = assigned.group(group)
        if PLACEHOLDER.match(value) or VERSION.fullmatch(value):
            continue
        if " " in value.strip() and PROSE.search(value):
            continue  # a sentence about the secret, not the secret
        if not LOOKS_GENERATED.search(value) and not (group == "quoted" and " " in value.strip()):
            continue  # a word is a name in code; quoted words with spaces are a passphrase
        spans.append(assigned.span(group))
    for start, end in reversed(spans):
        text = text[:start] + MARK + text[end:]
    return text


# A wallet's seed: 12 to 24 words of BIP-39's English list (bip39_english.txt, the standard's own
# file, sha256 2f5eed53…) in a row, with no name before it (a seed pasted alone, one a line, or
# numbered). Prose breaks such a run within a few words: "the", "and", "of", "to", "is" are not on
# the list, and a word of fewer than three letters is on no list. The whole run is taken: a
# list word beside the seed is a small loss, a seed word left is a leak.
BIP39_WORDS = frozenset(Path(__file__).with_name("bip39_english.txt").read_text().split())
SEED_RUN = re.compile(
    r"(?<![A-Za-z0-9_-])(?:[a-zA-Z]{3,8}(?:[ \t]+|[ \t]*[,\n][ \t]*)(?:\d{1,2}[.):][ \t]*)?){11,}[a-zA-Z]{3,8}"
    r"(?![A-Za-z0-9_])"
)
SEED_WORD = re.compile(r"[a-zA-Z]{3,8}")
SEED_WORDS = 12


def _on_the_list(word: str) -> bool:
    """A BIP-39 word as a seed is written: all lower case (or all upper), never a Name."""
    return word.lower() in BIP39_WORDS and (word.islower() or word.isupper())


def _seed_phrases(text: str) -> str:
    """`text` with each row of SEED_WORDS or more BIP-39 words (a seed phrase) taken out."""
    spans: list[tuple[int, int]] = []
    for run in SEED_RUN.finditer(text):
        row: list[re.Match] = []  # neighbours on the list; a word off it ends the row
        for word in [*SEED_WORD.finditer(text, run.start(), run.end()), None]:
            if word is not None and _on_the_list(word.group(0)):
                row.append(word)
                continue
            if len(row) >= SEED_WORDS:
                spans.append((row[0].start(), row[-1].end()))
            row = []
    for start, end in reversed(spans):
        text = text[:start] + MARK + text[end:]
    return text


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by [REDACTED]."""
    if not text or len(text) < SHORTEST_SECRET:
        return text
    enabled, values, long_values = _redaction_settings()
    if not enabled:
        return text
    if long_values and any(value in text for value in long_values):  # str `in` is far faster than a regex
        text = _configured(values).sub(MARK, text)
    present = _literals_in(text)  # read once: a replacement takes literals away, adds none (MARK holds none)
    if present:
        text = _tokens(text, present)
    if "uthorization" in text or "UTHORIZATION" in text:
        text = AUTHORIZATION.sub(lambda m: m.group(1) + MARK, text)
    if "://" in text and "@" in text:
        text = URL_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
        text = URL_KEY_USER.sub(lambda m: m.group(1) + MARK, text)
    if ("=" in text or ":" in text) and not present.isdisjoint(ENV_QUOTED_WORDS):
        text = ENV_QUOTED.sub(_env_value, text)  # before the bare form takes a quoted value's first word
    if "=" in text:
        # Substring looks first (a few microseconds): most texts with an `=` hold neither.
        if not present.isdisjoint(ENV_WORDS):
            text = ENV_ASSIGNMENT.sub(_env_value, text)
        for literal, first, shape in SESSION_COOKIES:
            if literal in text:
                text = shape.sub(lambda match, first=first: _cookie_value(match, first), text)
    if "ookie" in text or "OOKIE" in text:
        text = COOKIE_HEADER.sub(lambda m: m.group(1) + MARK, text)
    text = _assignments(_around(text, present) if present else text)
    # Twelve words need eleven gaps: a text with fewer spaces and line breaks holds no seed.
    if text.count(" ") + text.count("\n") + text.count("\t") >= SEED_WORDS - 1:
        text = _seed_phrases(text)
    return text


def _cookie_value(match: re.Match, first: str) -> str:
    """The value after `sessionid=` (`first` is the letter the name starts with), when the name
    is a word of its own (`my_session=…` is some other name)."""
    text, start = match.string, match.start()
    if start == 0 or text[start - 1] not in first:
        return match.group(0)
    if start >= 2 and (text[start - 2].isalnum() or text[start - 2] == "_"):
        return match.group(0)
    return text[start : match.string.index("=", start) + 1] + MARK


def _env_value(match: re.Match) -> str:
    """An upper-case name (starting a word) that ends at the match, then its value."""
    text, start = match.string, match.start()
    name = ENV_NAME_START.search(text, max(0, start - 80), start)
    begins = name.start() if name is not None else start
    if text[begins : start + 1][:1].isdigit() or (
        begins and (text[begins - 1].isalnum() or text[begins - 1] == "_")
    ):
        return match.group(0)  # part of a longer word, or no name: not an environment line
    value = match.group(2)
    if PLACEHOLDER.match(value) or value.isdigit() or value.lower() in ("true", "false", "none", "null"):
        return match.group(0)
    if " " in value.strip() and PROSE.search(value):
        return match.group(0)
    return text[start : match.start(2)] + MARK + text[match.end(2) : match.end()]


class RedactingFormatter(logging.Formatter):
    """A log formatter that redacts what it formats (the message, its arguments and any
    traceback), so a secret that reaches a log line leaves it as [REDACTED]. The standalone
    settings' LOGGING uses it; a host project names it in its own LOGGING."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


class _RedactedFormatter(logging.Formatter):
    """Another formatter's lines, redacted (`redacting_formatter`)."""

    def __init__(self, inner: logging.Formatter) -> None:
        super().__init__()
        self.inner = inner

    def format(self, record: logging.LogRecord) -> str:
        return redact(self.inner.format(record))


REDACTING_FACTORIES = (
    "motion_runner.ingest.redaction.RedactingFormatter",
    "motion_runner.ingest.redaction.redacting_formatter",
)


def redacting_formatter(spec: dict[str, Any]) -> logging.Formatter:
    """The formatter `spec` describes, as dictConfig reads one (`format`, `class` or `()`), its
    lines redacted: what `redacted_logging` makes of a host's own formatter."""
    import logging.config

    return _RedactedFormatter(logging.config.DictConfigurator({}).configure_formatter(dict(spec)))


def redacted_logging(config: dict[str, Any] | None = None) -> dict[str, Any]:
    """The host's own LOGGING with its lines redacted of secrets, everything else kept: each of
    its formatters redacts what it formats, and a handler without one gets the redacting
    formatter. Without a LOGGING of its own (None, {}), a console handler on the root at INFO.

        LOGGING = redacted_logging(globals().get("LOGGING"))  # last in the host's settings
    """
    if not config:
        return {
            "version": 1,
            "disable_existing_loggers": False,
            "formatters": {"redacted": {"()": REDACTING_FACTORIES[0]}},
            "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "redacted"}},
            "root": {"handlers": ["console"], "level": "INFO"},
        }
    out = copy.deepcopy(config)
    formatters = out.setdefault("formatters", {})
    for name, spec in list(formatters.items()):
        if isinstance(spec, dict) and spec.get("()") not in REDACTING_FACTORIES:
            formatters[name] = {"()": REDACTING_FACTORIES[1], "spec": spec}
    formatters.setdefault("redacted", {"()": REDACTING_FACTORIES[0]})
    for handler in out.get("handlers", {}).values():
        handler.setdefault("formatter", "redacted")
    return out


def redact_json(value: Any) -> Any:
    """Every string inside a JSON value redacted (keys are names, left alone). Iterative."""
    return _redact_json(value, redact)


def _redact_json(value: Any, redact_one: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return redact_one(value)
    if not isinstance(value, dict | list):
        return value
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        # Replacing the value of a key while iterating a dict's items is allowed (its size stays).
        for key, item in node.items() if isinstance(node, dict) else enumerate(node):
            # Parsed JSON holds exactly these types: asked by `type` first (a line has many values),
            # then by isinstance for a subclass (a TextChoices value is a str).
            kind = type(item)
            if kind is str:
                node[key] = redact_one(item)
            elif kind is dict or kind is list:
                stack.append(item)
            elif kind in _JSON_SCALARS:
                continue
            elif isinstance(item, str):
                node[key] = redact_one(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return value


_JSON_SCALARS = frozenset({int, float, bool, type(None)})


class Redactor:
    """`redact` and `redact_json` that redact each distinct string once. A batch's lines repeat
    most of their strings (the model, the session id, "assistant"; a text block is both in the raw
    line and the Message's text), many copies of each in a stream post. One per
    batch (EventWriter.write_many forgets them): the strings, secrets among them, are not kept
    past it, at most MAX_REMEMBERED strings or MAX_CHARACTERS at once, and forgotten when the
    redaction settings change."""

    MAX_REMEMBERED = 10_000
    MAX_CHARACTERS = 4_000_000

    def __init__(self) -> None:
        self.done: dict[str, str] = {}
        self.characters = 0
        self.settings = _redaction_settings()

    def forget(self) -> None:
        self.done.clear()
        self.characters = 0

    def redact(self, text: str) -> str:
        self._check_settings()
        return self._redact(text)

    def redact_json(self, value: Any) -> Any:
        """_redact_json's walk with `_redact`'s look-up written into it: a stream post's raw lines
        hold many strings and few distinct ones, and a call for each string that is already
        known is spared. Same strings, same
        answers, same order of first sightings (what `forget` counts)."""
        self._check_settings()
        if not isinstance(value, dict | list):
            return _redact_json(value, self._redact)
        done = self.done
        stack: list[Any] = [value]
        while stack:
            node = stack.pop()
            for key, item in node.items() if isinstance(node, dict) else enumerate(node):
                kind = type(item)
                if kind is str:
                    if len(item) < SHORTEST_SECRET:
                        continue  # what _redact answers without a look
                    redacted = done.get(item)
                    if redacted is None:
                        redacted = self._redact(item)
                    if redacted is not item:
                        node[key] = redacted
                elif kind is dict or kind is list:
                    stack.append(item)
                elif kind in _JSON_SCALARS:
                    continue
                elif isinstance(item, str):
                    node[key] = self._redact(item)
                elif isinstance(item, dict | list):
                    stack.append(item)
        return value

    def _check_settings(self) -> None:
        if (now := _redaction_settings()) is not self.settings:
            self.forget()
            self.settings = now

    def _redact(self, text: str) -> str:
        if len(text) < SHORTEST_SECRET:
            return text
        done = self.done.get(text)
        if done is None:
            if len(self.done) >= self.MAX_REMEMBERED or self.characters >= self.MAX_CHARACTERS:
                self.forget()
            done = self.done[text] = redact(text)
            self.characters += len(text)
        return done
