"""How a bench says its figures, so that one command states each target as a ratio (bench/README.md,
"Method"): `figure:` lines (a name, a value, higher is better) that bench/against.py reads from two
trees, and `ratio:` lines (a figure beside its baseline measured in the same run, against its
target), each with the machine's load beside it.

`BENCH_TREE` (set by bench/against.py) points a bench at another checkout's code: the bench files
stay this tree's, the apps they import and the web process they start are that tree's.
"""

from __future__ import annotations

import os
from pathlib import Path


def tree() -> Path:
    """The checkout whose code the bench measures: `BENCH_TREE`, or the one holding this file."""
    return Path(os.environ.get("BENCH_TREE") or Path(__file__).resolve().parent.parent).resolve()


def load() -> str:
    """`uptime`'s load averages (1, 5, 15 minutes): the machine is shared."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f} {five:.2f} {fifteen:.2f}"


def figure(name: str, value: float, unit: str) -> None:
    """One figure of this run (higher is better), for bench/against.py to compare across trees."""
    print(f"figure: {name} = {value:.6g} {unit}; {load()}", flush=True)


def ratio(
    name: str, value: float, baseline: float, unit: str, target: float, *, lower_is_better=False
) -> bool:
    """The figure beside its baseline (measured in the same run) and the target ratio; True when
    met. `lower_is_better` (a latency): the ratio is baseline / value."""
    times = baseline / value if lower_is_better else value / baseline
    met = times >= target
    print(
        f"ratio: {name} = {times:.2f}x (figure {value:,.4g} {unit}, baseline {baseline:,.4g} {unit}; "
        f"target >= {target:g}x): {'met' if met else 'NOT met'}; {load()}",
        flush=True,
    )
    return met
