"""Signing in with an SSH key: the sign-in that makes a person's posts wake with full tools.

The server hands out a one-time challenge; the person signs it with their key
(`ssh-keygen -Y sign -n motion-runner`), and the server checks the signature with
`ssh-keygen -Y verify` against the keys registered to them. OpenSSH does the cryptography:
nothing here parses a signature by hand.
"""

from __future__ import annotations

import secrets
import subprocess
import tempfile
import time
from pathlib import Path

from django.contrib.auth import get_user_model, login
from django.core.exceptions import ValidationError
from django.utils import timezone

from ..models import SshKey

NAMESPACE = "motion-runner"
CHALLENGE_SECONDS = 300
MAX_FAILURES = 5  # failed tries on one challenge before it is replaced
SESSION_KEY = "ssh_challenge"
SSH_KEYGEN = "ssh-keygen"


class SignInRefused(Exception):
    pass


def fingerprint_of(public_key: str) -> str:
    """The key's SHA256 fingerprint, as `ssh-keygen -lf` prints it; refuses what is not a key."""
    line = public_key.strip()
    if "\n" in line or not line:
        raise ValidationError("Paste exactly one public key line (ssh-ed25519 AAAA… comment).")
    with tempfile.NamedTemporaryFile("w", suffix=".pub") as handle:
        handle.write(line + "\n")
        handle.flush()
        result = subprocess.run([SSH_KEYGEN, "-lf", handle.name], capture_output=True, text=True, timeout=10)
    if result.returncode != 0:
        raise ValidationError(f"Not an SSH public key: {result.stderr.strip() or result.stdout.strip()}")
    return result.stdout.split()[1]


def add_key(user, public_key: str, name: str = "") -> SshKey:
    return SshKey.objects.create(
        user=user, public_key=public_key.strip(), name=name, fingerprint=fingerprint_of(public_key)
    )


# A public key whose private half was thrown away when it was made: nothing verifies against it.
DECOY_PUBLIC_KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIM+W6ckaoU5jRL+1c8EXS3GYw1aLt+WF/WEGALoX96mg decoy"
NO_MATCH = "That signature does not match this challenge for that username and its keys."


def new_challenge(session) -> str:
    challenge = f"motion-runner sign-in {secrets.token_urlsafe(24)} {int(time.time())}"
    session[SESSION_KEY] = {"challenge": challenge, "issued": time.time(), "failures": 0}
    return challenge


def _usable(issued: dict | None) -> bool:
    return bool(issued) and time.time() - issued["issued"] <= CHALLENGE_SECONDS


def current_challenge(session) -> str:
    """The challenge still waiting to be signed (kept after a failed try, so a person can sign
    it again without starting over), or a new one."""
    issued = session.get(SESSION_KEY)
    if _usable(issued) and issued.get("failures", 0) < MAX_FAILURES:
        return issued["challenge"]
    return new_challenge(session)


def normalise_signature(text: str) -> str:
    """What a browser or a terminal adds around a pasted signature, taken off: CRLF line ends (a
    form submits a textarea's lines that way), indents, trailing spaces, blank lines.
    `ssh-keygen -Y verify` accepts only the armoured lines themselves."""
    lines = (line.strip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    return "\n".join(line for line in lines if line)


def verify(username: str, challenge: str, signature: str) -> SshKey:
    """The key of `username` that signed `challenge`, or SignInRefused with the reason."""
    signature = normalise_signature(signature)
    if "BEGIN SSH SIGNATURE" not in signature:
        raise SignInRefused("That is not an SSH signature (it starts with -----BEGIN SSH SIGNATURE-----).")
    User = get_user_model()
    user = User.objects.filter(username=username, is_active=True).first()
    keys = list(user.ssh_keys.all()) if user is not None else []
    # An unknown name is checked against a decoy key, so it is refused with the same words and
    # after the same work (ssh-keygen runs) as a wrong signature: the form tells nobody who has
    # an account, neither by its answer nor by its timing.
    public_keys = [key.public_key for key in keys] or [DECOY_PUBLIC_KEY]
    with tempfile.TemporaryDirectory() as folder:
        signers = Path(folder) / "allowed_signers"
        signers.write_text("".join(f'"{username}" {public_key}\n' for public_key in public_keys))
        sigfile = Path(folder) / "challenge.sig"
        sigfile.write_text(signature + "\n")
        result = subprocess.run(
            [
                SSH_KEYGEN,
                "-Y",
                "verify",
                "-f",
                str(signers),
                "-I",
                username,
                "-n",
                NAMESPACE,
                "-s",
                str(sigfile),
            ],
            input=challenge.encode(),
            capture_output=True,
            timeout=10,
        )
    output = result.stdout.decode("utf-8", "replace")
    if result.returncode != 0 or not keys:
        raise SignInRefused(NO_MATCH)
    for key in keys:
        if key.fingerprint in output:
            SshKey.objects.filter(pk=key.pk).update(last_used_at=timezone.now())
            return key
    return keys[0]


def sign_in_with_ssh(request, username: str, signature: str) -> SshKey:
    """Signs the person in, using up the challenge; a failed try keeps it (counted), so the
    form can show the same challenge again."""
    issued = request.session.get(SESSION_KEY)
    if not _usable(issued) or issued.get("failures", 0) >= MAX_FAILURES:
        request.session.pop(SESSION_KEY, None)
        raise SignInRefused("The challenge expired or was already used: sign the new one below.")
    try:
        key = verify(username.strip(), issued["challenge"], signature)
    except SignInRefused:
        issued["failures"] = issued.get("failures", 0) + 1
        request.session[SESSION_KEY] = issued
        raise
    request.session.pop(SESSION_KEY, None)
    login(request, key.user, backend="django.contrib.auth.backends.ModelBackend")
    request.session["sign_in"] = "ssh"
    return key
