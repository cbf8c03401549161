"""The tests are laid out as the code is (issue 43, item 9): `tests/wakes/<room>/` holds the tests
of `wakes/<room>/`, `tests/motion_runner/<part>/` those of `motion_runner/<part>/`, and so on for
every app. A folder under an app's tests that names no package of that app fails here, as does a
folder at the top of tests/ that is neither an app nor one of the few that cut across the apps on
purpose. Files only: no database, no import of the code.
"""

from __future__ import annotations

from pathlib import Path

from tests.paths import ROOT

# The folders at the top of tests/ that are no app's, and why: each tests the whole product one way.
CROSS_CUTTING = {
    "browser": "real Chromium against the live server: what a person sees on a page",
    "e2e": "the real harness CLIs from node_modules against the fake model servers",
    "equivalence": "each fast path against its ORM reference, whatever module holds it",
    "fakes": "the fake model, HTTP and MCP servers the other tests run against (no tests)",
    "faults": "real Celery workers killed, frozen and cut off from their services",
    "host": "a host project of its own (memory-lane's shape) the binding's checks run inside",
    "recordings": "recorded harness output the parsers' tests replay (data, no tests)",
    "room": "the room simulation: people and agents in Motions, through every room at once",
}

# Folders inside an app's tests that name no package of the app, and why.
WITHIN_AN_APP = {
    "motion_runner/site": "the project as a whole: settings, commands, the image, bin/serve, docs, layers",
    "motion_runner/ingest/heldout": "ingest's redaction measured on a corpus kept apart from its rules",
}

IGNORED = {"__pycache__"}


def is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file()


def folders(under: Path) -> list[Path]:
    return sorted(
        path
        for path in under.rglob("*")
        if path.is_dir() and not IGNORED & set(path.relative_to(under).parts)
    )


def strays(root: Path) -> list[str]:
    """Each folder of `root`/tests that the code's layout does not account for, saying why."""
    tests = root / "tests"
    found = [
        f"tests/{path.name}: test files at the top of tests/ belong to an app's folder"
        for path in sorted(tests.glob("test_*.py"))
    ]
    for top in sorted(path for path in tests.iterdir() if path.is_dir() and path.name not in IGNORED):
        if top.name in CROSS_CUTTING:
            continue
        if not is_package(root / top.name):
            found.append(f"tests/{top.name}: names no app (nor is it in CROSS_CUTTING)")
            continue
        for folder in folders(top):
            name = folder.relative_to(tests).as_posix()
            if any(name == allowed or name.startswith(allowed + "/") for allowed in WITHIN_AN_APP):
                continue
            if not is_package(root / name):
                found.append(f"tests/{name}: {name}/ is no package of the code")
    return found


def test_every_test_folder_mirrors_a_package_of_the_code_or_is_named_as_cutting_across():
    assert strays(ROOT) == []


def test_every_exception_still_exists():
    """A folder moved or gone leaves its exception behind: the lists stay as short as the tests."""
    gone = [name for name in [*CROSS_CUTTING, *WITHIN_AN_APP] if not (ROOT / "tests" / name).is_dir()]
    assert gone == []


def test_a_stray_folder_is_named(tmp_path):
    """The check can fail: a copy of the layout's shape with a folder the code does not have."""
    for package in ("wakes", "wakes/turn", "motion_runner", "motion_runner/thread"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").touch()
    for folder in (
        "tests/wakes/turn",
        "tests/wakes/tuurn",
        "tests/motion_runner/thread",
        "tests/misc",
        "tests/room",
    ):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "test_it.py").touch()
    (tmp_path / "tests" / "test_loose.py").touch()

    assert strays(tmp_path) == [
        "tests/test_loose.py: test files at the top of tests/ belong to an app's folder",
        "tests/misc: names no app (nor is it in CROSS_CUTTING)",
        "tests/wakes/tuurn: wakes/tuurn/ is no package of the code",
    ]
