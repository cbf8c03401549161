"""A person's SSH key for sign-in tests: made with ssh-keygen, and a challenge signed with it as
`ssh-keygen -Y sign` does for the person at their terminal."""

from __future__ import annotations

import subprocess
from pathlib import Path


def make_key(folder: Path, name: str) -> Path:
    path = folder / name
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f", str(path)], check=True)
    return path


def sign(key: Path, challenge: str) -> str:
    return subprocess.run(
        ["ssh-keygen", "-Y", "sign", "-n", "motion-runner", "-f", str(key)],
        input=challenge.encode(),
        capture_output=True,
        check=True,
    ).stdout.decode()
