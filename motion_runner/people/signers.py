"""Enrolling the people of an OpenSSH allowed_signers file (issue 40, item 2).

memory-lane lets only key-signed devices write what makes its machines act (its
`services/mood_auth.py`: `key_device`), and its keys live in `MOOD_ALLOWED_SIGNERS`, an OpenSSH
allowed_signers file generated from hunter's inventory. Here the same people need an account with
an `SshKey` row: that is what trust and the steering read ("a person here who holds an SSH key").
`manage.py enroll_signers` reads the file and brings each listed key here, for the name it lists.

The file's format is OpenSSH's (`ssh-keygen(1)`, "ALLOWED SIGNERS"): per line, principals (a
comma-separated list, patterns allowed), optional options (`cert-authority`, `namespaces="…"`,
`valid-after=…`, `valid-before=…`), the key type and the base64 key, an optional comment. Only
lines whose namespaces include memory-lane's (`magenta-moods`), or name none, are memory-lane's
sign-in keys; a pattern or a certificate authority names nobody in particular and is skipped,
and so is a key past its `valid-before`. Each skip is said with its reason.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction

from ..models import SshKey
from .signin import fingerprint_of

NAMESPACE = "magenta-moods"  # memory-lane's (mood_auth.NAMESPACE)
KEY_TYPES = ("ssh-", "ecdsa-", "sk-")


@dataclass
class Listed:
    name: str
    key: str  # "type base64 [comment]"


@dataclass
class Enrollment:
    added: list[str] = field(default_factory=list)  # "name fingerprint"
    known: list[str] = field(default_factory=list)
    new_people: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "line N: why"


def _options(text: str) -> dict[str, str]:
    found = {}
    for part in _split_commas(text):
        name, _, value = part.partition("=")
        found[name.strip().lower()] = value.strip().strip('"')
    return found


def _split_commas(text: str) -> list[str]:
    parts, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _valid_before(value: str) -> datetime | None:
    digits = value.rstrip("Z")
    for shape in ("%Y%m%d%H%M%S", "%Y%m%d%H%M", "%Y%m%d"):
        try:
            return datetime.strptime(digits, shape).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def read(
    text: str, namespace: str = NAMESPACE, now: datetime | None = None
) -> tuple[list[Listed], list[str]]:
    """(each name with its key, each line skipped with why)."""
    now = now or datetime.now(UTC)
    listed: list[Listed] = []
    skipped: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line, posix=True)
        except ValueError:
            skipped.append(f"line {number}: unreadable")
            continue
        at = next((i for i, word in enumerate(words) if word.startswith(KEY_TYPES)), None)
        if at is None or at + 1 >= len(words) or at == 0:
            skipped.append(f"line {number}: no key on it")
            continue
        principals, options = words[0], _options(",".join(words[1:at])) if at > 1 else {}
        if "cert-authority" in options:
            skipped.append(f"line {number}: a certificate authority, not one person's key")
            continue
        if "namespaces" in options and namespace not in options["namespaces"].split(","):
            skipped.append(f"line {number}: for {options['namespaces']}, not {namespace}")
            continue
        ends = _valid_before(options.get("valid-before", "")) if "valid-before" in options else None
        if ends is not None and ends <= now:
            skipped.append(f"line {number}: expired {ends:%Y-%m-%d}")
            continue
        key = " ".join(words[at : at + 3])
        for name in principals.split(","):
            if not name or any(c in name for c in "*?!"):
                skipped.append(f"line {number}: {name or '(empty)'} is a pattern, not a name")
                continue
            listed.append(Listed(name=name, key=key))
    return listed, skipped


def enroll(listed: list[Listed], *, dry_run: bool = False) -> Enrollment:
    """Each name an account (made without a password if it has none: it signs in with its key)
    and each key an `SshKey` of its; a key already here for that person is left as it is, one
    held by someone else is skipped (a key is one person's)."""
    done = Enrollment()
    users = get_user_model()
    for entry in listed:
        try:
            fingerprint = fingerprint_of(entry.key)
        except ValidationError as exc:
            done.skipped.append(f"{entry.name}: {'; '.join(exc.messages)}")
            continue
        held = SshKey.objects.filter(fingerprint=fingerprint).select_related("user").first()
        if held is not None:
            owner = held.user.get_username()
            if owner == entry.name:
                done.known.append(f"{entry.name} {fingerprint}")
            else:
                done.skipped.append(f"{entry.name}: {fingerprint} is {owner}'s key here")
            continue
        if dry_run:
            done.added.append(f"{entry.name} {fingerprint}")
            continue
        with transaction.atomic():
            user = users.objects.filter(**{users.USERNAME_FIELD: entry.name}).first()
            if user is None:
                user = users.objects.create_user(entry.name)
                user.set_unusable_password()
                user.save(update_fields=["password"])
                done.new_people.append(entry.name)
            SshKey.objects.create(
                user=user, public_key=entry.key, name="memory-lane", fingerprint=fingerprint
            )
        done.added.append(f"{entry.name} {fingerprint}")
    return done
