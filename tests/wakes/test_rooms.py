"""wakes/ is a few rooms, not a flat folder (issue 31, "What to build" 3): its top holds at most 15
modules, and every room says in its `__init__` what it owns."""

from __future__ import annotations

import ast

from tests.paths import ROOT

WAKES = ROOT / "wakes"
DJANGOS = {"migrations", "management"}  # Django's own folders, named by Django


def top_modules() -> list[str]:
    """What a newcomer sees at wakes' top: its modules and its packages (not `__init__.py`)."""
    return sorted(
        path.name
        for path in WAKES.iterdir()
        if (path.suffix == ".py" and path.name != "__init__.py") or (path / "__init__.py").is_file()
    )


def test_wakes_top_holds_at_most_15_modules():
    assert len(top_modules()) <= 15, top_modules()


def test_every_room_of_wakes_says_what_it_owns():
    silent = [
        str(init.relative_to(ROOT))
        for init in sorted(WAKES.glob("*/__init__.py"))
        if init.parent.name not in DJANGOS and not ast.get_docstring(ast.parse(init.read_text()))
    ]
    assert silent == []
