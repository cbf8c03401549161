"""docs/switch-over.md names, for each step, the test that follows it: every test file and test it
names exists, so a renamed or removed test is a failing check here, not a dead reference."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = (ROOT / "docs" / "switch-over.md").read_text()


def test_every_test_file_the_switch_over_names_exists():
    named = set(re.findall(r"`(tests/[\w/]+\.py)`", DOC))
    assert len(named) >= 10
    assert sorted(p for p in named if not (ROOT / p).is_file()) == []


def test_every_test_the_switch_over_names_exists_in_a_file_it_names():
    sources = "".join((ROOT / p).read_text() for p in set(re.findall(r"`(tests/[\w/]+\.py)`", DOC)))
    tests = set(re.findall(r"`(test_\w+)`", DOC))
    assert tests
    assert sorted(t for t in tests if f"def {t}(" not in sources) == []


def test_the_readmes_memory_lane_section_links_the_switch_over():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Adding it to memory-lane", 1)[1].split("\n## ", 1)[0]
    assert "(docs/switch-over.md)" in section
