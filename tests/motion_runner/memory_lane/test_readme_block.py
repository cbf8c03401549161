"""The README's memory-lane block (issue 40, item 4): what a host pastes sets the etiquette link
memory-lane's poller put in every wake (its `ETIQUETTE`), so the footers under the binding keep it."""

from __future__ import annotations

import re
import textwrap

from tests.paths import ROOT

POLLERS_ETIQUETTE = "https://pickipedia.xyz/wiki/Cryptograss:Magenta_26_Million#Speaking_in_a_Mood"


def readme_block() -> dict:
    section = (ROOT / "README.md").read_text().split("## Adding it to memory-lane", 1)[1]
    block = textwrap.dedent(re.search(r"```python\n(.*?)```", section, re.S).group(1))
    names: dict = {"INSTALLED_APPS": [], "LOGGING": None}
    exec(block, names)  # noqa: S102  the block, exactly as a host pastes it
    return names


def test_the_readmes_memory_lane_block_sets_the_pollers_etiquette_page():
    assert readme_block()["WAKES_ETIQUETTE_URL"] == POLLERS_ETIQUETTE
