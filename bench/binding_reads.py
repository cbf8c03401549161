"""The binding's reads once a tick (issue 41, item 3): statements and time to resolve the dials of
200 due pairs, under memory-lane's binding read once for all of them, beside the same pairs read
pair by pair (what each resolve() did before) and the apps' own record, in the same run.

Runs inside the host project (tests/host/settings.py, the README's block) on a database of its
own, made anew:

    BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:5432/<a db of your own> .venv/bin/python bench/binding_reads.py

The target (issue 41): at most 3 statements a pair under the binding; printed as `ratio:` lines
against the pair-by-pair reads and beside the apps' own record.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
URL = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/motion_runner_bench_reads")
os.environ["DJANGO_SETTINGS_MODULE"] = "tests.host.settings"
os.environ["HOST_DATABASE_URL"] = URL

from _figures import figure, ratio  # noqa: E402
from _setup import setup  # noqa: E402

setup(URL)

from django.db import connection  # noqa: E402
from django.test import override_settings  # noqa: E402

from tests.host.reads_data import many_moods  # noqa: E402
from wakes.models import Dials  # noqa: E402
from wakes.models.in_force import reads_once, resolve  # noqa: E402

ROUNDS = 7


def measure(pairs, *, once: bool) -> tuple[int, float]:
    """(statements, best seconds of ROUNDS) to resolve every pair's dials."""
    dials = Dials.load()
    times, count = [], 0
    for _ in range(ROUNDS):
        seen = []

        def counted(execute, sql, params, many, context, seen=seen):
            seen.append(1)
            return execute(sql, params, many, context)

        with connection.execute_wrapper(counted):
            started = time.perf_counter()
            if once:
                with reads_once(pairs):
                    for motion_id, agent_id in pairs:
                        resolve(motion_id, agent_id, dials)
            else:
                for motion_id, agent_id in pairs:
                    resolve(motion_id, agent_id, dials)
            times.append(time.perf_counter() - started)
        count = len(seen)
    return count, min(times)


def main() -> None:
    pairs = many_moods(100)  # 200 due pairs
    n = len(pairs)
    once_count, once_s = measure(pairs, once=True)
    each_count, each_s = measure(pairs, once=False)
    with override_settings(MOTION_RUNNER_RECORD="own"):  # the apps' own record: Steer rows, no host
        own_count, own_s = measure(pairs, once=True)
    print(f"pairs: {n}; rounds: {ROUNDS}; best round each")
    figure("binding, read once a tick: statements a pair", once_count / n, "statements")
    figure("binding, pair by pair (before): statements a pair", each_count / n, "statements")
    figure("apps' own record: statements a pair", own_count / n, "statements")
    figure("binding, read once a tick: ms for 200 pairs", once_s * 1000, "ms")
    figure("binding, pair by pair: ms for 200 pairs", each_s * 1000, "ms")
    figure("apps' own record: ms for 200 pairs", own_s * 1000, "ms")
    ratio(
        "statements a pair, read once vs pair by pair",
        once_count / n,
        each_count / n,
        "statements",
        1.0,
        lower_is_better=True,
    )
    ratio("time, read once vs pair by pair", once_s, each_s, "s", 1.0, lower_is_better=True)
    ratio("time, binding read once vs the apps' own record", once_s, own_s, "s", 0.5, lower_is_better=True)
    met = once_count / n <= 3
    print(
        f"target: at most 3 statements a pair under the binding: {once_count / n:.2f}: {'met' if met else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
