"""The production image (Dockerfile, docker-compose.yml) can do what the README promises: the
programs the code calls are in its install list, and what must outlive a container is a volume."""

from __future__ import annotations

import re

import yaml

from motion_runner.people import signin
from tests.paths import ROOT

# Each program the image's processes call, and the Debian package that brings it.
PROGRAMS = {
    signin.SSH_KEYGEN: "openssh-client",  # every SSH sign-in is checked by `ssh-keygen -Y verify`
    "git": "git",
    "rg": "ripgrep",  # the harnesses' search tool
    "node": "nodejs",  # the harness CLIs
    "npm": "npm",
}


def dockerfile() -> str:
    return (ROOT / "Dockerfile").read_text()


def apt_installed() -> set[str]:
    packages: set[str] = set()
    for command in re.findall(r"apt-get install ([^&]+)", dockerfile().replace("\\\n", " ")):
        packages |= {word for word in command.split() if not word.startswith("-")}
    return packages


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def image_env() -> dict[str, str]:
    env = {}
    for line in re.findall(r"^ENV (.+?)(?<!\\)$", dockerfile().replace("\\\n", " "), re.M):
        env.update(pair.split("=", 1) for pair in line.split())
    return env


def test_the_image_installs_every_program_the_code_calls():
    missing = {program: package for program, package in PROGRAMS.items() if package not in apt_installed()}
    assert missing == {}


def test_ssh_sign_in_is_among_them():
    assert "openssh-client" in apt_installed()


def test_the_apps_files_are_a_named_volume_in_every_app_service():
    data_dir = image_env()["MOTION_RUNNER_DATA_DIR"]
    spec = compose()
    for name in ("web", "worker", "housekeeping", "beat"):
        mounts = dict(volume.split(":", 1)[::-1] for volume in spec["services"][name]["volumes"])
        assert mounts.get(data_dir) in spec["volumes"], name


def test_the_static_files_are_the_images_own_not_a_volumes():
    env = image_env()
    assert not env["STATIC_ROOT"].startswith(env["MOTION_RUNNER_DATA_DIR"])


def test_a_developers_own_installs_stay_out_of_the_image():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".venv", "node_modules", "var", ".git"} <= set(ignored)
