#!/usr/bin/env python
"""How long a thread of many messages takes to show its newest message, in headless Chromium.

A Motion with `--messages` messages (100,000 by default) behind the web process as deployed
(gunicorn, gthread). Measured, in the same run:
  page     - the thread page in Chromium (Playwright driving /usr/bin/chromium): from navigation
             to the newest message visible, and the message requests it made by then (it opens
             at the newest page: `latest=1`);
  baseline - what the page did before: read the thread from its oldest message, 500 a page
             with `after=`, until the newest (HTTP only, no rendering: a lower bound of the old
             page's time).

    [DATABASE_URL=postgres://…] .venv/bin/python bench/thread_open.py [--messages 100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import time
from datetime import timedelta

from _django import bench_database, percentile, web_env, web_process

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]


def fill(messages: int) -> None:
    from django.utils import timezone

    from motion_runner.models import Message, Motion, Visibility

    motion = Motion.objects.create(slug="bench", title="Bench", visibility=Visibility.PUBLIC)
    start = timezone.now() - timedelta(days=30)
    for first in range(0, messages, 10_000):
        Message.objects.bulk_create(
            Message(
                motion=motion,
                sender="justin",
                source="web",
                kind="text",
                text=f"message {n}",
                created_at=start + timedelta(milliseconds=10 * n),
            )
            for n in range(first, min(first + 10_000, messages))
        )
    from django.db import connection

    if connection.vendor == "postgresql":
        # The statistics autovacuum gathers a minute after a bulk insert: without them the planner
        # takes the Motion for a few rows and sorts all 100,000 (a production table has them).
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE motion_runner_message")


def baseline(base_url: str, messages: int) -> tuple[float, int]:
    import httpx

    began, requests, cursor, last = time.perf_counter(), 0, None, None
    with httpx.Client(base_url=base_url, timeout=60) as client:
        while True:
            params = {"limit": "500"} | ({"after": cursor} if cursor else {})
            page = client.get("/api/motions/bench/messages/", params=params).json()
            requests += 1
            cursor = page["next"] or cursor
            last = page["results"][-1]["text"] if page["results"] else last
            if not page["more"]:
                break
    assert last == f"message {messages - 1}", last
    return time.perf_counter() - began, requests


def page_open(browser, base_url: str, messages: int) -> tuple[float, int]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/messages/" in r.url else None)
    began = time.perf_counter()
    page.goto(f"{base_url}/motions/bench/", wait_until="commit")
    page.get_by_text(f"message {messages - 1}", exact=True).wait_for(state="visible", timeout=120_000)
    seconds = time.perf_counter() - began
    made = len(asked)
    if os.environ.get("BENCH_TIMINGS"):  # where the time went, from the page's own clock
        print(
            page.evaluate(
                """() => JSON.stringify({
                  html: performance.getEntriesByType("navigation")[0].responseEnd,
                  dcl: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd,
                  latest: performance.getEntriesByType("resource").filter((r) => r.name.includes("latest=1"))
                    .map((r) => [r.startTime, r.responseEnd]),
                  now: performance.now(),
                })"""
            )
        )
    context.close()
    return seconds, made


def parts(base_url: str, runs: int) -> tuple[float, float]:
    """The page's two parts alone, over HTTP: its HTML, and its newest page of messages (ms, best of runs)."""
    import httpx

    html, latest = [], []
    with httpx.Client(base_url=base_url, timeout=60) as client:
        for _ in range(runs):
            began = time.perf_counter()
            client.get("/motions/bench/").raise_for_status()
            html.append(time.perf_counter() - began)
            began = time.perf_counter()
            client.get(
                "/api/motions/bench/messages/", params={"latest": "1", "limit": "50"}
            ).raise_for_status()
            latest.append(time.perf_counter() - began)
    return min(html) * 1000, min(latest) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    executable = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    with bench_database("thread_open") as connection:
        fill(args.messages)
        # DEBUG=1 only so that the page's static files are served without a collectstatic.
        with (
            web_process(web_env(connection) | {"DEBUG": "1"}, 8) as base_url,
            sync_playwright() as playwright,
        ):
            browser = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_FLAGS
            )
            page_open(browser, base_url, args.messages)  # warm: the first start of the page's static files
            opened = [page_open(browser, base_url, args.messages) for _ in range(args.runs)]
            browser.close()
            base = [baseline(base_url, args.messages) for _ in range(max(1, args.runs // 2))]
            html_ms, latest_ms = parts(base_url, args.runs)
    times = [seconds for seconds, _ in opened]
    print(f"{args.messages:,} messages on {connection.vendor}")
    print(
        f"page: newest visible p50 {percentile(times, 50) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
        f" over {len(times)} runs; message requests by then: {max(n for _, n in opened)}"
    )
    print(
        f"  of which, over HTTP alone: the page's HTML {html_ms:.0f} ms, its newest page of messages {latest_ms:.0f} ms"
    )
    print(
        f"baseline (from the oldest, 500 a page, HTTP only): {min(s for s, _ in base) * 1000:.0f} ms,"
        f" {base[0][1]} requests"
    )


if __name__ == "__main__":
    main()
