#!/usr/bin/env python
"""One watch cycle over 1,000 watches against the local fakes, and a naive checker beside it.

500 wiki pages on one wiki, 300 GitHub issues/PRs, 150 web pages (50 with an ETag, 50 with
Last-Modified only, 50 with neither, a third of those with ads that change on every load),
50 contracts on one JSON-RPC node. The fakes answer after `--latency` seconds (20 ms by
default: a near server; loopback alone would flatter the naive checker's serial requests).

Cycle 1 is the first check (records state, posts nothing). Then a few things change (10 wiki
edits, 5 GitHub comments, 3 web pages, 5 token transfers), and cycle 2 is the measured one:
wall time, requests, bytes, GitHub 304s, lines posted. The naive baseline is one unconditional
request per watch, serial, as a simple poller would do it, measured in the same run.

    .venv/bin/python bench/watch_cycle.py [--latency 0.02] [--database sqlite:////tmp/x.sqlite3]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--latency", type=float, default=0.02, help="seconds each fake waits before answering"
    )
    parser.add_argument("--database", help="a DATABASE_URL (default: a fresh SQLite file)")
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
    from watchlist.models import Watch

    settings.WATCH_HTTP_ALLOW_NETWORKS = ["127.0.0.0/8"]
    wiki, github, web, node = FakeMediaWiki(), FakeGitHub(), FakeWeb(), FakeEthNode()
    fakes = [wiki, github, web, node]
    for fake in fakes:
        fake.start()
    settings.WATCH_WIKI_API = wiki.api
    settings.WATCH_TALK_REPLY_WIKIS = [wiki.api]
    settings.WATCH_GITHUB_API = github.url
    settings.WATCH_ETH_RPC_URL = node.url

    motion = Motion.objects.create(slug="bench", title="Bench")
    watches = []
    for n in range(500):
        wiki.edit(f"Talk:Song {n}", "Justin", "start", f"words {n}")
        watches.append(Watch(motion=motion, kind="wiki_page", target=f"Talk:Song {n}"))
    for n in range(1, 301):
        github.add("cryptograss/merch", n, f"Issue {n}", is_pr=n % 3 == 0)
        watches.append(Watch(motion=motion, kind="github", target=f"cryptograss/merch#{n}"))
    for n in range(150):
        validator = ("etag", "last_modified", "none")[n % 3]
        url = web.page(f"/p{n}", f"Page {n}", f"Story {n}.\n\nMore about {n}.", validator, dynamic=n % 9 == 2)
        watches.append(Watch(motion=motion, kind="web_page", target=url))
    contracts = [f"0x{n:040x}" for n in range(1, 51)]
    for address in contracts:
        watches.append(Watch(motion=motion, kind="contract", target=address))
    for w in watches:
        w.settings_hash = w.compute_settings_hash()
    Watch.objects.bulk_create(watches)
    for fake in fakes:
        fake.delay = args.latency

    def due() -> None:
        Watch.objects.update(next_due_at=timezone.now())

    def measure(label: str, **dials) -> dict:
        for name, value in dials.items():
            setattr(settings, name, value)
        for fake in fakes:
            fake.reset_log()
        counted_before = github.counted()
        with HttpClient() as client:
            started = time.perf_counter()
            report = run_cycle(http=client)
            wall = time.perf_counter() - started
            stats = client.stats
        gh_304 = github.statuses.count(304)
        return {
            "label": label,
            "wall": wall,
            "requests": stats.requests,
            "bytes": stats.bytes_received + stats.bytes_sent,
            "wiki": len(wiki.requests),
            "github": len(github.requests),
            "github_304": gh_304,
            "github_counted": github.counted() - counted_before,
            "web": len(web.requests),
            "rpc": len(node.requests),
            "report": report,
        }

    # Cycle 1: first checks, silent.
    due()
    first = measure("first check (records state)")
    assert Message.objects.count() == 0, "a first check posted something"

    def changes() -> None:
        for n in range(10):
            wiki.edit(f"Talk:Song {n * 37}", "Rosalind", "a question", f"words\nquestion {n}")
        for n in range(5):
            github.comment("cryptograss/merch", 10 + n * 50, "alice", f"comment {n}")
        for n in (0, 1, 3):  # one of each validator
            web.change(f"/p{n}", f"Story {n} changed.\n\nMore.")
        start = node.finalized
        node.head += 20
        for n in range(5):
            node.erc721_transfer(contracts[n], start + 1 + n, "0x" + "a" * 40, "0x" + "b" * 40, 100 + n)

    changes()
    due()
    ours = measure("this checker (default dials)")
    posted = Message.objects.filter(source="watch").count()

    dials = (
        f"dials: {settings.WATCH_MAX_WORKERS} workers, {settings.WATCH_HTTP_PER_HOST_CONCURRENCY} per host, "
        f"per-host interval {settings.WATCH_HTTP_PER_HOST_INTERVAL} s"
    )
    changes()
    due()
    unthrottled = measure("this checker, no per-host interval", WATCH_HTTP_PER_HOST_INTERVAL=0.0)

    # The naive baseline: one unconditional request per watch, one after another.
    for fake in fakes:
        fake.reset_log()
    with HttpClient(per_host_interval=0.0) as client:
        started = time.perf_counter()
        for w in Watch.objects.order_by("pk"):
            if w.kind == "wiki_page":
                client.get(
                    wiki.api,
                    params={
                        "action": "query",
                        "prop": "revisions",
                        "titles": w.target,
                        "rvprop": "ids|timestamp|user|comment|size",
                        "format": "json",
                        "formatversion": "2",
                    },
                )
            elif w.kind == "github":
                repo, number = w.target.split("#")
                client.get(f"{github.url}/repos/{repo}/issues/{number}")
            elif w.kind == "web_page":
                client.get(w.target)
            else:
                client.post_json(
                    node.url,
                    {
                        "jsonrpc": "2.0",
                        "id": 1,
                        "method": "eth_getLogs",
                        "params": [
                            {"address": w.target, "fromBlock": hex(node.finalized - 20), "toBlock": "latest"}
                        ],
                    },
                )
        naive = {
            "label": "naive (1 unconditional request per watch, serial)",
            "wall": time.perf_counter() - started,
            "requests": client.stats.requests,
            "bytes": client.stats.bytes_received + client.stats.bytes_sent,
            "wiki": len(wiki.requests),
            "github": len(github.requests),
            "github_304": 0,
            "web": len(web.requests),
            "rpc": len(node.requests),
        }
    for fake in fakes:
        fake.stop()

    print(
        f"watch cycle benchmark: 1,000 watches (500 wiki, 300 GitHub, 150 web, 50 contracts), fake latency {args.latency * 1000:.0f} ms"
    )
    print(dials + " (the defaults)")
    print()
    header = f"{'run':<52} {'wall s':>7} {'requests':>9} {'KB':>8} {'wiki':>5} {'github':>6} {'304s':>5} {'web':>5} {'rpc':>5}"
    print(header)
    print("-" * len(header))
    for row in (first, ours, unthrottled, naive):
        print(
            f"{row['label']:<52} {row['wall']:>7.2f} {row['requests']:>9} {row['bytes'] / 1024:>8.0f} "
            f"{row['wiki']:>5} {row['github']:>6} {row['github_304']:>5} {row['web']:>5} {row['rpc']:>5}"
        )
    print()
    unchanged_github = 300 - 5
    print(
        f"lines posted by the measured cycle: {posted} (10 wiki + 5 GitHub + 3 web + 5 transfers = 23 expected)"
    )
    print(f"wiki requests: {ours['wiki']} (target ⌈500 ÷ 50⌉ = {math.ceil(500 / 50)})")
    print(
        f"GitHub: {ours['github_304']} of {unchanged_github} unchanged watches answered 304; {ours['github_counted']} requests counted against the rate limit"
    )
    print(f"cycle wall time: {ours['wall']:.2f} s of the 90 s budget ({ours['wall'] / 90:.1%})")
    print()
    print("ratios, naive ÷ this checker (default dials):")
    print(
        f"  requests  {naive['requests'] / ours['requests']:.2f}×   ({naive['requests']} vs {ours['requests']})"
    )
    print(
        f"  bytes     {naive['bytes'] / ours['bytes']:.2f}×   ({naive['bytes'] / 1024:.0f} KB vs {ours['bytes'] / 1024:.0f} KB)"
    )
    print(
        f"  wall time {naive['wall'] / ours['wall']:.2f}×   ({naive['wall']:.2f} s vs {ours['wall']:.2f} s; no throttle: {unthrottled['wall']:.2f} s)"
    )
    ok = ours["wiki"] == 10 and ours["github_304"] == unchanged_github and ours["wall"] < 30 and posted == 23
    print()
    print("targets met" if ok else "TARGETS MISSED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
