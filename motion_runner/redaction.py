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

import re
from functools import cache
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

MARK = "[REDACTED]"

PREFIXED_TOKENS = re.compile(
    "|".join(
        [
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)",
            r"\bgh[pousr]_[A-Za-z0-9]{30,}",  # GitHub tokens
            r"\bgithub_pat_[A-Za-z0-9_]{40,}",
            r"\bsk-ant-[A-Za-z0-9_-]{16,}",  # Anthropic
            r"\bsk-(?:proj-|svcacct-)?[A-Za-z0-9_-]{24,}",  # OpenAI
            r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key ids
            r"\bxox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
            r"\b[rs]k_live_[A-Za-z0-9]{16,}",  # Stripe
            r"\bAIza[0-9A-Za-z_-]{35}",  # Google
            r"\bnpm_[A-Za-z0-9]{36}",
            r"\bmrk_[0-9a-f]{8}_[A-Za-z0-9_-]{20,}",  # this project's own agent keys
            r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWTs
        ]
    )
)
AUTHORIZATION = re.compile(
    r"(?i)(\bauthorization\b[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[A-Za-z0-9._~+/=-]{8,}"
)
URL_PASSWORD = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^\s:/@\"']+:)[^\s@/\"']+(?=@)")
# Bounded name parts: an unbounded run around the keyword is quadratic on long words.
SECRET_NAME = (
    r"[A-Za-z0-9_.-]{0,40}?(?:secret|token|passw(?:or)?d|api[_-]?key|private[_-]?key|access[_-]?key"
    r"|credentials?|mnemonic)(?![a-z])[A-Za-z0-9_.-]{0,40}"
)
ASSIGNMENT = re.compile(
    rf"(?i)(?<![A-Za-z0-9_.-])([\"']?{SECRET_NAME}[\"']?\s*[:=]\s*[\"']?)([^\s\"'\\,;(){{}}\[\]<>]{{6,}})"
)
LOOKS_GENERATED = re.compile(r"\d|[+/=@#$%^&*!]|(?=.*[a-z])(?=.*[A-Z]).{16,}")
PLACEHOLDER = re.compile(
    r"(?i)^(?:your[-_].*|.*example.*|.*placeholder.*|\$\{?.*|\{\{.*|<.*|x+|\*+|changeme|redacted.*|\[redacted\].*)$"
)


@cache
def _configured(values: tuple[str, ...]) -> re.Pattern | None:
    wanted = sorted({v for v in values if len(v) >= 8}, key=len, reverse=True)
    return re.compile("|".join(re.escape(v) for v in wanted)) if wanted else None


def configured_secrets() -> tuple[str, ...]:
    """The secret values in settings: each setting REDACT_SETTINGS names (a string, a URL's
    path and query, or the passwords in a mapping of credentials)."""
    found: list[str] = []
    for name in settings.REDACT_SETTINGS:
        value = getattr(settings, name, None)
        if isinstance(value, str) and "://" in value:
            parts = urlsplit(value)
            found += [p for p in (parts.password, parts.path.strip("/"), parts.query) if p]
        elif isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            found += [pair[1] for pair in value.values() if isinstance(pair, tuple | list) and len(pair) == 2]
    return tuple(v for v in found if isinstance(v, str))


def _keep_or_mark(match: re.Match) -> str:
    value = match.group(2)
    if PLACEHOLDER.match(value) or not LOOKS_GENERATED.search(value):
        return match.group(0)
    return match.group(1) + MARK


def redact(text: str) -> str:
    """`text` with every secret it holds replaced by [REDACTED]."""
    if not text or not settings.REDACT_SECRETS:
        return text
    if (configured := _configured(configured_secrets())) is not None:
        text = configured.sub(MARK, text)
    text = PREFIXED_TOKENS.sub(MARK, text)
    text = AUTHORIZATION.sub(lambda m: m.group(1) + MARK, text)
    text = URL_PASSWORD.sub(lambda m: m.group(1) + MARK, text)
    return ASSIGNMENT.sub(_keep_or_mark, text)


def redact_json(value: Any) -> Any:
    """Every string inside a JSON value redacted (keys are names, left alone). Iterative."""
    if isinstance(value, str):
        return redact(value)
    if not isinstance(value, dict | list):
        return value
    root = [value]
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        keys = list(node) if isinstance(node, dict) else range(len(node))
        for key in keys:
            item = node[key]
            if isinstance(item, str):
                node[key] = redact(item)
            elif isinstance(item, dict | list):
                stack.append(item)
    return root[0]
