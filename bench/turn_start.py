"""A look-only Claude Code wake's start: the time from `execute_turn` to the turn's first stored
line (the CLI's first event, stored and announced), with the record served over HTTP by one
long-lived `manage.py serve_record`, with the record as a stdio server started for the turn (the
fallback, as before issue 41), and without the record, interleaved in one run on the fake model
(tests/fakes/anthropic_api.py) and the real pinned `claude`. And `instant`: the HTTP record's own
answers replayed at once by bench/_instant_mcp.py (no SDK, no database, no pass asked), the floor
any server could reach: http − instant is the record server's share of the start, instant − none
the harness's own MCP connect.

And the start as the parts it is made of, each beside the same part of the other wakes (p50 ms):
  gather   `enqueue_turn`: the wake's prompt finalized with its context, its session chosen, the row
  claim    `claim_turn`: queued -> running
  prompt   `build_prompt_at_start`: the prompt built from the record as it stands
  servers  `policy_for`: the turn's tools, the record's config among them (the HTTP server's
           health asked and a pass issued, or a stdio pass file written)
  launch   the adapter's launch (its MCP config written) and the run's writer and parser
  CLI      the harness started until its first line is stored (its MCP servers connected first:
           Claude Code prints nothing before)

    .venv/bin/python bench/turn_start.py --turns 6
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _django import ROOT, bench_database, database_url, free_port, percentile
from _figures import figure, ratio

MODES = ("http", "instant", "stdio", "none")
PARTS = ("gather", "claim", "prompt", "servers", "launch", "CLI", "first line")


class Parts:
    """Stamps of the runner's steps (its module's functions wrapped for the run), per turn."""

    def __init__(self) -> None:
        self.stamps: dict[str, tuple[float, float]] = {}

    def wrap(self, module, name: str, part: str) -> None:
        real = getattr(module, name)

        def timed(*args, **kwargs):
            began = time.monotonic()
            try:
                return real(*args, **kwargs)
            finally:
                self.stamps[part] = (began, time.monotonic())

        setattr(module, name, timed)

    def of_turn(self, enqueued: tuple[float, float], first: float) -> dict[str, float]:
        s = self.stamps
        return {
            "gather": enqueued[1] - enqueued[0],
            "claim": s["claim"][1] - s["claim"][0],
            "prompt": s["prompt"][1] - s["prompt"][0],
            "servers": s["servers"][1] - s["servers"][0],
            "launch": s["run"][0] - s["servers"][1],
            "CLI": first - s["run"][0],
            "first line": first - s["claim"][0],
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=6, help="wakes of each kind (interleaved)")
    args = parser.parse_args()
    with bench_database("bench_turn_start") as connection:
        from django.test import override_settings

        from motion_runner.models import Agent, Motion, Source
        from motion_runner.recall.passes import reachable
        from motion_runner.runner import turns as runner_turns
        from motion_runner.runner.turns import enqueue_turn, execute_turn
        from motion_runner.signals import message_created
        from tests.fakes.anthropic_api import FakeAnthropic, Reply, Text

        port = free_port()
        url = f"http://127.0.0.1:{port}/mcp"
        env = dict(
            os.environ, DATABASE_URL=database_url(connection), DJANGO_SETTINGS_MODULE="motion_runner.settings"
        )
        server = subprocess.Popen(
            [sys.executable, "manage.py", "serve_record", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stderr=subprocess.DEVNULL,
        )
        instant_port = free_port()
        instant_url = f"http://127.0.0.1:{instant_port}/mcp"
        instant = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("_instant_mcp.py")), str(instant_port), url],
            env=env,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while not (reachable(url, 0.2) and reachable(instant_url, 0.2)) and time.monotonic() < deadline:
            time.sleep(0.1)
        firsts: dict[int, float] = {}

        def heard(sender, message, **kwargs):
            if message.turn_id and message.source != Source.SYSTEM:
                firsts.setdefault(message.turn_id, time.monotonic())

        message_created.connect(heard)
        home = Path(tempfile.mkdtemp())
        workspace = Path(tempfile.mkdtemp())
        times: dict[str, list[float]] = {mode: [] for mode in MODES}
        parts: dict[tuple[str, str], list[float]] = {(mode, part): [] for mode in MODES for part in PARTS}
        stamps = Parts()
        for name, part in (
            ("claim_turn", "claim"),
            ("build_prompt_at_start", "prompt"),
            ("policy_for", "servers"),
            ("run_harness", "run"),
        ):
            stamps.wrap(runner_turns, name, part)
        try:
            with FakeAnthropic(default=Reply(Text("Nothing to add."))) as api:
                motion = Motion.objects.create(slug="bench-start", title="start", workspace=str(workspace))
                agent = Agent.objects.create(name="starter", harness="claude-code")
                motion.agents.add(agent)
                extra = {**api.env(), "HOME": str(home)}
                for round_ in range(args.turns + 1):  # the first round warms the CLI's caches
                    for mode in MODES:
                        chosen = {
                            "http": {"RECORD_SERVER_URL": url},
                            "instant": {"RECORD_SERVER_URL": instant_url},
                            "stdio": {"RECORD_SERVER_URL": ""},
                            "none": {"RECORD_SERVER_URL": "", "WAKE_MEMORY_SERVERS": ["no-record"]},
                        }[mode]
                        with override_settings(RUNNER_EXTRA_ENV=extra, **chosen):
                            stamps.stamps.clear()
                            enqueuing = time.monotonic()
                            queued = enqueue_turn(motion, agent, "Anything new?", mode="look", dispatch=False)
                            began = time.monotonic()
                            execute_turn(queued.pk)
                        if round_ and queued.pk in firsts:
                            times[mode].append((firsts[queued.pk] - began) * 1000)
                            for part, spent in stamps.of_turn((enqueuing, began), firsts[queued.pk]).items():
                                parts[mode, part].append(spent * 1000)
        finally:
            message_created.disconnect(heard)
            for process in (server, instant):
                process.terminate()
                process.wait(15)
    for mode in MODES:
        values = times[mode]
        print(
            f"{mode:>5}: {len(values)} wakes  first line p50 {percentile(values, 50):7.0f} ms  "
            f"min {min(values, default=float('nan')):7.0f}  max {max(values, default=float('nan')):7.0f}"
        )
    print(f"\nthe start by its parts, p50 ms over {args.turns} wakes each (interleaved):")
    print(
        f"{'part':<11}{'http':>9}{'instant':>9}{'stdio':>9}{'none':>9}"
        f"{'http/none':>11}{'inst/none':>11}{'stdio/none':>12}"
    )
    for part in PARTS:
        http, instant_, stdio, none = (percentile(parts[mode, part], 50) for mode in MODES)
        over = [mine / none if none else float("nan") for mine in (http, instant_, stdio)]
        print(
            f"{part:<11}{http:9.1f}{instant_:9.1f}{stdio:9.1f}{none:9.1f}"
            f"{over[0]:10.2f}x{over[1]:10.2f}x{over[2]:11.2f}x"
        )
    print()
    p50 = {mode: percentile(times[mode], 50) for mode in MODES}
    figure(
        "look-only wakes a second to first line, record over HTTP (1000 / p50 ms)", 1000 / p50["http"], "/s"
    )
    print(f"with the HTTP record / without: {p50['http'] / p50['none']:.2f}x (target <= 1.3x)")
    print(f"with the stdio record / without: {p50['stdio'] / p50['none']:.2f}x")
    print(
        f"with an instant MCP server / without: {p50['instant'] / p50['none']:.2f}x "
        f"(the harness's own connect); HTTP record / instant: {p50['http'] / p50['instant']:.2f}x (the server's share)"
    )
    # As speeds (baseline / figure): >= 1/1.3 means within 1.3x of the wake without the record.
    ratio(
        "first line p50, without the record / with the HTTP record",
        p50["http"],
        p50["none"],
        "ms",
        1 / 1.3,
        lower_is_better=True,
    )
    ratio(
        "first line p50, stdio record / HTTP record", p50["http"], p50["stdio"], "ms", 1, lower_is_better=True
    )


if __name__ == "__main__":
    main()
