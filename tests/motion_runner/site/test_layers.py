"""The layers point one way (issue 12, "What to build" 5): import-linter's contracts hold, and no
project import hides inside a function, where it once hid four import cycles."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.paths import ROOT

APPS = ("motion_runner", "wakes", "watchlist")

# (file, function) pairs that may import project modules inside their body, and why.
ALLOWED = {
    # Django imports an AppConfig before the models are loaded: receivers, hooks and Celery
    # tasks are imported and connected once they are.
    ("motion_runner/apps.py", "ready"),
    ("wakes/apps.py", "ready"),
    # The standalone's record server (uvicorn, the MCP SDK 2): a host imports every command module
    # (memory-lane pins an older SDK) and never runs this one.
    ("motion_runner/management/commands/serve_record.py", "handle"),
    # gunicorn reads its hooks module (`-c python:…`) before it loads the app, and Django with it.
    ("motion_runner/gunicorn_hooks.py", "close_readers"),
}


def hidden_imports(source: str) -> list[tuple[str, int, str]]:
    """(function, line, module) for every import of a project module inside a function body."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                module = "." * inner.level + (inner.module or "")
                if inner.level or module.split(".")[0] in APPS:
                    found.append((node.name, inner.lineno, module))
            elif isinstance(inner, ast.Import):
                found += [
                    (node.name, inner.lineno, a.name) for a in inner.names if a.name.split(".")[0] in APPS
                ]
    return found


def project_files() -> list[Path]:
    return [
        path
        for app in APPS
        for path in sorted((ROOT / app).rglob("*.py"))
        if "migrations" not in path.relative_to(ROOT).parts
    ]


def test_the_scan_finds_an_import_hidden_in_a_function_and_leaves_the_rest():
    source = (
        "import json\n"
        "from motion_runner.models import Turn\n"
        "def run():\n"
        "    from .tasks import run_turn\n"
        "    import wakes.consider_loop.loop\n"
        "    import decimal\n"
        "class Config:\n"
        "    async def ready(self):\n"
        "        from motion_runner import signals\n"
    )
    assert hidden_imports(source) == [
        ("run", 4, ".tasks"),
        ("run", 5, "wakes.consider_loop.loop"),
        ("ready", 9, "motion_runner"),
    ]


def test_no_project_import_hides_in_a_function_outside_the_allow_list():
    found = [
        f"{path.relative_to(ROOT)}:{line} {function}() imports {module}"
        for path in project_files()
        for function, line, module in hidden_imports(path.read_text())
        if (str(path.relative_to(ROOT)), function) not in ALLOWED
    ]
    assert found == []


def test_the_allow_list_names_only_functions_that_still_import():
    """An entry whose import is gone goes too, so the list stays as short as the code needs."""
    for file, function in ALLOWED:
        assert function in {name for name, _, _ in hidden_imports((ROOT / file).read_text())}, (
            file,
            function,
        )


def test_import_linters_contracts_are_kept():
    """bin/test runs lint-imports before pytest; this says the same from inside the suite."""
    run = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    assert run.stdout.count("KEPT") == len(contracts) and "BROKEN" not in run.stdout


def test_no_app_module_is_over_600_lines():
    """A module is read whole by whoever changes it: past 600 lines it holds more than one concern."""
    long = {
        str(path.relative_to(ROOT)): lines
        for path in project_files()
        if (lines := len(path.read_text().splitlines())) > 600
    }
    assert long == {}
