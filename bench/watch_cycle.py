#!/usr/bin/env python
"""One watch cycle over 10,000 watches against the local fakes at a 60 ms round trip, with the
per-watch checker it replaces measured beside it in the same run.

The spread, as a busy deployment has it: 5,000 wiki pages (4,500 on one wiki, 500 on a
second), 3,000 GitHub issues and PRs over 40 repositories (a few big ones and a long tail:
repository i has about 3,000 / (i + 1) / H(40) of them), 1,500 web pages over 50 hosts
(127.0.1.x; a third each with an ETag, Last-Modified only, or neither), 500 contracts over
3 JSON-RPC URLs. Every fake answers after `--latency` seconds.

The first checks (which record state and post nothing) run with no latency: they happen once
per watch, not every cycle. Then two measured cycles at the latency:
  quiet    nothing changed: requests must stay within
           ⌈wiki pages / 50⌉ per wiki + repositories + RPC URLs + web pages (+ one finalized
           head per RPC URL);
  changes  20 wiki edits, 10 GitHub comments, 2 closes, 5 web pages, 10 token transfers: the
           same, plus a follow-up per changed GitHub issue.
The baseline is the checker before the shared listings (one GitHub request per watched issue
in the serial GitHub lane, one eth_getLogs per contract), run on the same changes with the
budget lifted so its whole time shows; the production budget is 75 s of the 90 s cycle.

    .venv/bin/python bench/watch_cycle.py [--latency 0.06] [--database postgres://…]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WIKI_PAGES = (4500, 500)
GITHUB_ISSUES, REPOSITORIES = 3000, 40
WEB_PAGES, WEB_HOSTS = 1500, 50
CONTRACTS, RPC_URLS = 500, 3


def setup_django(database: str | None) -> None:
    workdir = tempfile.mkdtemp(prefix="watch-bench-")
    os.environ["DATABASE_URL"] = database or f"sqlite:///{workdir}/bench.sqlite3"
    os.environ["CELERY_BROKER_URL"] = "memory://"
    os.environ["MOTION_RUNNER_DATA_DIR"] = workdir
    os.environ["LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "motion_runner.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def repository_sizes() -> list[int]:
    harmonic = sum(1 / (i + 1) for i in range(REPOSITORIES))
    sizes = [max(1, round(GITHUB_ISSUES / (i + 1) / harmonic)) for i in range(REPOSITORIES)]
    sizes[0] += GITHUB_ISSUES - sum(sizes)
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency", type=float, default=0.06, help="seconds each fake waits before answering"
    )
    parser.add_argument("--database", help="a DATABASE_URL (default: a fresh SQLite file)")
    parser.add_argument("--no-baseline", action="store_true", help="skip the per-watch checker")
    args = parser.parse_args()
    setup_django(args.database)

    from django.conf import settings
    from django.utils import timezone

    from motion_runner.models import Message, Motion
    from tests.fakes.github import FakeGitHub
    from tests.fakes.jsonrpc import FakeEthNode
    from tests.fakes.mediawiki import FakeMediaWiki
    from tests.fakes.web import FakeWeb
    from watchlist.checker import run_cycle
    from watchlist.http import HttpClient
    from watchlist.kinds import KINDS, Outcome, Shared, Snapshot
    from watchlist.kinds.contract import ContractEvents
    from watchlist.kinds.github import GitHubIssue, RateLimited
    from watchlist.models import Watch

    settings.WATCH_HTTP_ALLOW_NETWORKS = ["127.0.0.0/8"]
    settings.WATCH_MAX_PER_CYCLE = 20_000
    wikis = [FakeMediaWiki(), FakeMediaWiki(host="127.0.0.2")]
    github = FakeGitHub()
    webs = [FakeWeb(host=f"127.0.1.{n + 1}") for n in range(WEB_HOSTS)]
    nodes = [FakeEthNode(host=f"127.0.2.{n + 1}") for n in range(RPC_URLS)]
    fakes = [*wikis, github, *webs, *nodes]
    for fake in fakes:
        fake.start()
    settings.WATCH_WIKI_API = wikis[0].api
    settings.WATCH_TALK_REPLY_WIKIS = [wiki.api for wiki in wikis]
    settings.WATCH_GITHUB_API = github.url

    motion = Motion.objects.create(slug="bench", title="Bench")
    watches = []
    for wiki, count in zip(wikis, WIKI_PAGES, strict=True):
        for n in range(count):
            wiki.edit(f"Talk:Song {n}", "Justin", "start", f"words {n}")
            watches.append(
                Watch(motion=motion, kind="wiki_page", target=f"Talk:Song {n}", options={"api": wiki.api})
            )
    repos = []
    for index, size in enumerate(repository_sizes()):
        repo = f"cryptograss/repo{index}"
        repos.append((repo, size))
        for n in range(1, size + 1):
            github.add(repo, n, f"Issue {n}", is_pr=n % 3 == 0)
            watches.append(Watch(motion=motion, kind="github", target=f"{repo}#{n}"))
        github.add(repo, size + 1, "Nobody watches this one")
    for n in range(WEB_PAGES):
        web = webs[n % WEB_HOSTS]
        validator = ("etag", "last_modified", "none")[n % 3]
        url = web.page(f"/p{n}", f"Page {n}", f"Story {n}.\n\nMore about {n}.", validator, dynamic=n % 9 == 2)
        watches.append(Watch(motion=motion, kind="web_page", target=url))
    contracts = [(f"0x{n + 1:040x}", nodes[n % RPC_URLS]) for n in range(CONTRACTS)]
    for address, node in contracts:
        watches.append(Watch(motion=motion, kind="contract", target=address, options={"rpc": node.url}))
    for w in watches:
        w.settings_hash = w.compute_settings_hash()
    Watch.objects.bulk_create(watches, batch_size=2000)
    total = len(watches)

    def due() -> None:
        Watch.objects.update(next_due_at=timezone.now())

    def measure(label: str, budget: float | None = None) -> dict:
        for fake in fakes:
            fake.reset_log()
        counted_before = github.counted()
        with HttpClient() as client:
            started, cpu_started = time.perf_counter(), time.process_time()
            report = run_cycle(http=client, budget=budget)
            wall = time.perf_counter() - started
            cpu = time.process_time() - cpu_started
            stats = client.stats
        return {
            "label": label,
            "wall": wall,
            "cpu": cpu,
            "requests": stats.requests,
            "bytes": stats.bytes_received + stats.bytes_sent,
            "wiki": sum(len(w.requests) for w in wikis),
            "github": len(github.requests),
            "github_counted": github.counted() - counted_before,
            "web": sum(len(w.requests) for w in webs),
            "rpc": sum(len(n.requests) for n in nodes),
            "report": report,
        }

    # First checks, then one cycle that brings every listing its ETag; no latency (once per watch).
    for _ in range(2):
        due()
        run_cycle(budget=3600)
    assert Message.objects.count() == 0, "a first check posted something"
    for fake in fakes:
        fake.delay = args.latency

    due()
    quiet = measure("quiet cycle (nothing changed)")

    def changes(round_: int) -> None:
        for n in range(20):
            wikis[n % 2].edit(
                f"Talk:Song {n * 17}", "Rosalind", "a question", f"words\nquestion {round_}.{n}"
            )
        for n in range(10):
            repo, size = repos[n % len(repos)]
            github.comment(repo, 1 + n % size, "alice", f"comment {round_}.{n}")
        for n in range(2):
            repo, size = repos[-1 - n]
            if round_ % 2:
                github.close(repo, size, "justin")
            else:
                github.reopen(repo, size)
        for n in range(5):  # pages 0–4: every validator, and one page with ads
            webs[n % WEB_HOSTS].change(f"/p{n}", f"Story {n} changed in round {round_}.\n\nMore.")
        for node in nodes:
            node.head += 20
        for n in range(10):
            address, node = contracts[n]
            node.erc721_transfer(
                address, node.finalized - 5, "0x" + "a" * 40, "0x" + "b" * 40, round_ * 100 + n
            )

    before = Message.objects.filter(source="watch").count()
    changes(1)
    due()
    ours = measure("this checker, with changes")
    posted = Message.objects.filter(source="watch").count() - before
    by_kind: dict[str, int] = {}
    for kind in Message.objects.filter(source="watch").values_list("raw__kind", flat=True):
        by_kind[kind] = by_kind.get(kind, 0) + 1  # only this cycle has posted so far

    baseline = None
    if not args.no_baseline:

        class PerIssueGitHub(GitHubIssue):
            """The checker before shared listings: every watched issue asked on its own."""

            def check(self, http: HttpClient, snaps: list[Snapshot]) -> Iterable[Outcome | Shared]:
                limited = None
                for snap in snaps:
                    if limited is not None:
                        yield Outcome(snap.id, error=limited)
                        continue
                    try:
                        yield self.check_one(http, snap)
                    except RateLimited as exc:
                        limited = exc
                        yield Outcome(snap.id, error=exc)

        class PerWatchContracts(ContractEvents):
            """One eth_getLogs per contract watch."""

            def check_range(self, http, url, head, last, size, group):  # type: ignore[no-untyped-def]
                for snap in group:
                    yield from super().check_range(http, url, head, last, size, [snap])

        saved = dict(KINDS)
        KINDS["github"], KINDS["contract"] = PerIssueGitHub(), PerWatchContracts()
        try:
            changes(2)
            due()
            baseline = measure("per-watch checker (before), same changes", budget=3600)
        finally:
            KINDS.clear()
            KINDS.update(saved)

    for fake in fakes:
        fake.stop()

    wiki_bound = sum(math.ceil(count / 50) for count in WIKI_PAGES)
    bound = wiki_bound + len(repos) + RPC_URLS + WEB_PAGES
    print(
        f"watch cycle benchmark: {total:,} watches ({sum(WIKI_PAGES):,} wiki pages on 2 wikis, "
        f"{GITHUB_ISSUES:,} GitHub issues/PRs in {REPOSITORIES} repositories, {WEB_PAGES:,} web pages on "
        f"{WEB_HOSTS} hosts, {CONTRACTS} contracts on {RPC_URLS} RPC URLs), fake latency {args.latency * 1000:.0f} ms"
    )
    print("CPU s: this process's CPU time in the cycle, the in-process fakes' share included")
    print(
        f"dials: {settings.WATCH_MAX_WORKERS} workers, {settings.WATCH_HTTP_PER_HOST_CONCURRENCY} per host, "
        f"per-host interval {settings.WATCH_HTTP_PER_HOST_INTERVAL} s; load: {os.getloadavg()[0]:.1f} (1-min average)"
    )
    print()
    header = (
        f"{'run':<44} {'wall s':>7} {'CPU s':>6} {'requests':>9} {'KB':>7} {'wiki':>5} {'github':>6} "
        f"{'counted':>7} {'web':>5} {'rpc':>5} {'skipped':>7}"
    )
    print(header)
    print("-" * len(header))
    for row in (quiet, ours, baseline):
        if row is None:
            continue
        print(
            f"{row['label']:<44} {row['wall']:>7.2f} {row['cpu']:>6.1f} {row['requests']:>9} {row['bytes'] / 1024:>7.0f} "
            f"{row['wiki']:>5} {row['github']:>6} {row['github_counted']:>7} {row['web']:>5} {row['rpc']:>5} "
            f"{row['report'].skipped:>7}"
        )
    print()
    print(
        f"bound: ⌈wiki/50⌉ {wiki_bound} + repositories {len(repos)} + RPC URLs {RPC_URLS} + web pages {WEB_PAGES} "
        f"= {bound}; the quiet cycle sent {quiet['requests']} (the finalized head adds {RPC_URLS})"
    )
    print(
        f"lines posted by the cycle with changes: {posted} (20 wiki + 10 GitHub comments + 2 closes + 5 web + 10 transfers = 47 expected): {by_kind}"
    )
    print(
        f"cycle wall time: quiet {quiet['wall']:.2f} s, with changes {ours['wall']:.2f} s, of the 90 s cycle"
    )
    if baseline is not None:
        print()
        print("ratios, per-watch checker ÷ this checker (same changes):")
        print(
            f"  requests  {baseline['requests'] / ours['requests']:.2f}×   ({baseline['requests']} vs {ours['requests']})"
        )
        print(
            f"  GitHub    {baseline['github'] / max(ours['github'], 1):.1f}×   ({baseline['github']} vs {ours['github']})"
        )
        print(
            f"  bytes     {baseline['bytes'] / ours['bytes']:.2f}×   ({baseline['bytes'] / 1024:.0f} KB vs {ours['bytes'] / 1024:.0f} KB)"
        )
        print(
            f"  wall time {baseline['wall'] / ours['wall']:.2f}×   ({baseline['wall']:.2f} s vs {ours['wall']:.2f} s)"
        )
    ok = (
        quiet["requests"] <= bound + RPC_URLS
        and ours["wall"] < 90
        and quiet["report"].skipped == 0
        and ours["report"].skipped == 0
        and posted == 47
    )
    print()
    print("targets met" if ok else "TARGETS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
