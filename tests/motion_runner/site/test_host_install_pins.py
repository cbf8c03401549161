"""The README's install into memory-lane, on memory-lane's own requirements (issue 22):
requirements-host.txt installed into a fresh virtualenv beside every line of memory-lane's
requirements.txt keeps its `Django==5.2.7` and `psycopg2-binary` (no upgrade of the host's Django,
no psycopg 3 to switch its database driver), and the apps run there: every module imports, a
watched page's words are read, `check --deploy`, `migrate` and tests/host/record_check.py in the
host test project, on Django 5.2.7 through psycopg2. The README's step 1 is followed as written (its shell block, with
this checkout for /srv/motion-runner), and every command runs from outside the checkout, as from
memory-lane's own: only the `.pth` line the README gives makes the apps importable.

The virtualenv is built once from the package registry (pip) and kept under
.host-venv/, named by what it was built from; a change to either list builds a new one.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.motion_runner.site.test_host_project import ROOT, admin_sql, fresh_host_database

# memory-lane's requirements.txt (cryptograss/memory-lane, late 2026), as a newcomer's environment
# already holds it: the apps must install beside every line of it, its Django and driver pins first.
MEMORY_LANE_PINS = [
    "Django==5.2.7",
    "psycopg2-binary==2.9.10",
    "watchdog==6.0.0",
    "constant-sorrow==0.1.0a9",
    "gunicorn==23.0.0",
    "python-dotenv==1.0.0",
    "mcp>=1.29.0,<2.0.0",
    "debugpy>=1.8.0",
    "requests>=2.31.0",
    "pywebpush==2.5.0",
    "PyYAML>=6.0,<7",
    "Pillow>=11,<13",
    "pillow-heif>=1.0,<2",
]
# What tests/host/settings.py needs of its own (memory-lane reads DATABASE_URL otherwise).
HOST_TEST_NEEDS = ["dj-database-url"]


def readme_requirements() -> str:
    """The file the README's step 1 tells a newcomer to install (`pip install -r /srv/…/<file>`)."""
    section = (ROOT / "README.md").read_text().split("## Adding it to memory-lane", 1)[1]
    return re.search(r"pip install -r /srv/motion-runner/(\S+)", section).group(1)


def readme_install_lines() -> list[str]:
    """The README's step 1 shell block, line by line, with this checkout for /srv/motion-runner."""
    section = (ROOT / "README.md").read_text().split("## Adding it to memory-lane", 1)[1]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    return [
        line.strip().replace("/srv/motion-runner", str(ROOT)) for line in block.splitlines() if line.strip()
    ]


def follow_readme_step_one(python: str) -> None:
    """Run the README's install lines in the virtualenv (its `python` first on PATH). The pip line
    is host_venv's own (with memory-lane's pins, which a newcomer has already); npm's harness CLIs
    are not needed here (no turn runs a real harness in record_check)."""
    env = {**os.environ, "PATH": f"{os.path.dirname(python)}:{os.environ['PATH']}"}
    for line in readme_install_lines():
        if line.startswith(("pip install", "(cd")):
            continue
        run = subprocess.run(["bash", "-c", line], env=env, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, f"the README's line {line!r} failed:\n{run.stderr}"


def host_venv() -> str:
    """The virtualenv with memory-lane's pins and the README's requirements, built if missing."""
    requirements = (ROOT / readme_requirements()).read_bytes()
    stamp = hashlib.sha256(requirements + "\n".join(MEMORY_LANE_PINS + HOST_TEST_NEEDS).encode()).hexdigest()[
        :12
    ]
    venv = ROOT / ".host-venv" / stamp
    python = venv / "bin" / "python"
    if (venv / "built").exists():
        return str(python)
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", *MEMORY_LANE_PINS, *HOST_TEST_NEEDS]
        + ["-r", str(ROOT / readme_requirements())],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert install.returncode == 0, (
        f"pip could not install beside memory-lane's pins:\n{install.stderr[-3000:]}"
    )
    (venv / "built").write_text(stamp)
    return str(python)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    python = host_venv()
    follow_readme_step_one(python)
    outside = tmp_path_factory.mktemp("memory-lane-checkout")  # a host's own folder, not this checkout
    url, name = fresh_host_database("_pins")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "VIRTUAL_ENV"))},
        "DJANGO_SETTINGS_MODULE": "tests.host.settings",
        "HOST_DATABASE_URL": url,
    }

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [python, *args], cwd=outside, env=env, capture_output=True, text=True, timeout=300
        )

    try:
        versions = run(
            "-c",
            "import django, json, importlib.util as u; django.setup(); from django.db import connection; "
            "print(json.dumps([django.get_version(), connection.Database.__name__, bool(u.find_spec('psycopg'))]))",
        )
        check = run("-m", "django", "check", "--deploy", "--fail-level", "WARNING")
        imports = run(
            "-c",
            "import django, importlib, pkgutil; django.setup(); "
            "[importlib.import_module(m.name) for p in ('motion_runner', 'wakes', 'watchlist') "
            "for m in pkgutil.walk_packages(importlib.import_module(p).__path__, p + '.') "
            "if '.migrations.' not in m.name and not m.name.startswith('motion_runner.sql.backend')]",
        )
        page = (
            "<html><body><article><p>"
            + "The watchlist reads a page's own words. " * 8
            + "</p></article></body></html>"
        )
        web_page = run(
            "-c",
            "import django, sys; django.setup(); from watchlist.kinds.web_page import main_text; "
            "print(main_text(sys.argv[1]))",
            page,
        )
        migrate = run("-m", "django", "migrate", "--noinput")
        record = run("-m", "tests.host.record_check") if migrate.returncode == 0 else None
    finally:
        admin_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    assert versions.returncode == 0, versions.stderr
    assert record is not None and record.returncode == 0, migrate.stderr + (record.stderr if record else "")
    return {
        "versions": json.loads(versions.stdout.splitlines()[-1]),
        "check": check,
        "imports": imports,
        "web_page": web_page,
        "seen": json.loads(record.stdout.splitlines()[-1]),
    }


def test_the_readme_installs_the_host_requirements_not_the_standalone_ones():
    assert readme_requirements() == "requirements-host.txt"


def test_the_readmes_install_block_puts_the_checkout_on_the_hosts_path():
    # Its pip line, its .pth line and its npm line: the .pth is what lets memory-lane import the apps.
    lines = readme_install_lines()
    assert any(line.startswith("pip install -r") for line in lines)
    assert any(".pth" in line and str(ROOT) in line for line in lines)


def test_memory_lanes_django_and_driver_stay_as_it_pins_them(installed):
    django_version, driver, psycopg3_installed = installed["versions"]
    assert django_version == "5.2.7"
    assert driver == "psycopg2" and not psycopg3_installed


def test_every_module_of_the_three_apps_imports_in_the_host_environment(installed):
    # watchlist's web pages need trafilatura, and it lxml's cleaner, a package of its own now. Not
    # the standalone's own database backend (motion_runner.sql.backend, psycopg 3): a host keeps its own.
    imports = installed["imports"]
    assert imports.returncode == 0, imports.stderr[-2000:]


def test_a_watched_web_pages_words_are_read_in_the_host_environment(installed):
    # trafilatura cleans a page with lxml's cleaner, a package of its own since lxml 5.2.
    web_page = installed["web_page"]
    assert web_page.returncode == 0, web_page.stderr[-2000:]
    assert "reads a page's own words" in web_page.stdout


def test_check_deploy_is_clean_on_memory_lanes_pins(installed):
    check = installed["check"]
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_apps_write_memory_lanes_record_on_its_django_through_psycopg2(installed):
    seen = installed["seen"]
    assert seen["record"]["index_only"] == [] and seen["record"]["host_only"] == []
    assert seen["stream_status"] == [200, 200, 200]
    assert seen["steps"] and all(step["summary"] for step in seen["steps"])
    assert all(result["content"] == "" for result in seen["tool_results"])
