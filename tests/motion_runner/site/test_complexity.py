"""No function in the runner is graded D or worse by radon's cyclomatic complexity (its stream loop
was an F): a block that grows past C is named here, to be split before it lands."""

from __future__ import annotations

from pathlib import Path

from radon.complexity import cc_rank, cc_visit

import motion_runner.runner

RUNNER = Path(motion_runner.runner.__file__).parent
WORST_GRADE = "C"


def blocks_graded_worse_than_c(source: str) -> list[str]:
    """`name (line): grade (complexity)` of each function, method or class worse than C."""
    return [
        f"{block.fullname} (line {block.lineno}): {cc_rank(block.complexity)} ({block.complexity})"
        for block in cc_visit(source)
        if cc_rank(block.complexity) > WORST_GRADE
    ]


def test_the_check_names_a_block_graded_worse_than_c():
    branches = "".join(f"    if x == {n}:\n        return {n}\n" for n in range(25))

    assert blocks_graded_worse_than_c(f"def tangled(x):\n{branches}    return -1\n") == [
        "tangled (line 1): D (26)"
    ]


def test_no_function_in_the_runner_is_graded_d_or_worse():
    modules = sorted(RUNNER.rglob("*.py"))
    assert modules  # the runner's modules were found
    worse = [
        f"{module.relative_to(RUNNER.parent)}: {block}"
        for module in modules
        for block in blocks_graded_worse_than_c(module.read_text())
    ]

    assert worse == []
