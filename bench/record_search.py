#!/usr/bin/env python
"""The record server's `search` over 1,000,000 Messages (issue 35): p95 of the tool's own search
(motion_runner/recall/record.py: the turn's scope, the GIN-indexed full text, newest first, 10
results) beside its baseline measured in the same run: the same scope and order with the text
matched by an unindexed `ILIKE '%word%'` per word.

The corpus: 1,000 Motions open to the signed-in, the agent among each one's agents (its search
reaches all of them: the widest scope), 1,000 posts each, 8-24 words drawn from a 5,000-word
vocabulary with a Zipf-like skew (word k about 1/k as often as the first). The queries: 60, one
or two words drawn uniformly by rank (rare and common alike), each run once untimed (a warm
cache, as a server in use has) and then `--runs` times.

    DATABASE_URL=postgres://…/<db> .venv/bin/python bench/record_search.py [--messages 1000000] [--runs 5]

Targets: p95 under 100 ms absolute at 1,000,000 (the issue's), and the ratio to the baseline.
"""

from __future__ import annotations

import argparse
import random
import time

from _django import bench_database, percentile
from _figures import figure, load, ratio

VOCABULARY = 5_000
MOTIONS = 1_000
QUERIES = 60


def word(rank: int) -> str:
    return f"w{rank}x"  # no English stop word, no stem to strip: every rank a word of its own


def fill(messages: int) -> None:
    from django.db import connection

    from motion_runner.models import Agent, Motion, Turn, TurnStatus, Visibility
    from motion_runner.sql import message_search

    agent = Agent.objects.create(name="magent")
    Motion.objects.bulk_create(
        Motion(slug=f"m{n}", title=f"M {n}", visibility=Visibility.SIGNED_IN) for n in range(MOTIONS)
    )
    agent.motions.add(*Motion.objects.all())
    Turn.objects.create(motion_id="m0", agent=agent, status=TurnStatus.RUNNING)
    from django.apps import apps

    model = apps.get_model("motion_runner", "Message")
    with connection.schema_editor() as editor:  # the GIN indexes built once, after the rows
        for index in message_search.postgres_indexes():
            editor.remove_index(model, index)
    # A word of rank k in 1 .. VOCABULARY is drawn with probability ~ 1/k: exp(random * ln V).
    # By hand: a million rows through the ORM would take this bench's minutes twice over.
    with connection.cursor() as cursor:
        cursor.execute(
            """
            INSERT INTO motion_runner_message
              (id, motion_id, sender, source, kind, text, tool_name, tool_id, is_error,
               harness_message_id, session_id, model_backend, effort, stop_reason, cwd, source_file,
               sign_in, created_at)
            SELECT gen_random_uuid(), 'm' || (g %% %(motions)s),
                   CASE WHEN g %% 3 = 0 THEN 'magent' ELSE 'person' || (g %% 50) END,
                   'web', 'text',
                   (SELECT string_agg('w' || floor(exp(random() * ln(%(vocabulary)s)))::int || 'x', ' ')
                      FROM generate_series(1, 8 + (g %% 17))),
                   '', '', false, '', '', '', '', '', '', '', '',
                   now() - make_interval(secs => %(messages)s - g)
              FROM generate_series(1, %(messages)s) AS g
            """,
            {"motions": MOTIONS, "vocabulary": VOCABULARY, "messages": messages},
        )
    with connection.schema_editor() as editor:
        for index in message_search.postgres_indexes():
            editor.add_index(model, index)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # every table: a production database has its statistics


def ilike_search(turn, query: str) -> list:
    """The baseline: the tool's scope, kinds and order, each word an unindexed ILIKE."""
    from motion_runner.models import Message
    from motion_runner.recall import record
    from motion_runner.sql.message_search import words

    messages = Message.objects.filter(motion_id__in=record.scope(turn), kind__in=record.SAID_KINDS)
    for each in words(query):
        messages = messages.extra(where=["text ILIKE %s"], params=[f"%{each}%"])
    return list(messages.order_by("-created_at", "-id")[:10])


def timed(search, turn, queries: list[str], runs: int) -> list[float]:
    for query in queries:
        search(turn, query)  # warm
    spent: list[float] = []
    for _ in range(runs):
        for query in queries:
            began = time.perf_counter()
            search(turn, query)
            spent.append((time.perf_counter() - began) * 1000)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline-runs", type=int, default=1, help="the ILIKE scan is slow: fewer runs")
    args = parser.parse_args()
    with bench_database("record_search"):
        began = time.perf_counter()
        fill(args.messages)
        print(
            f"filled {args.messages:,} messages in {time.perf_counter() - began:.0f} s; {load()}", flush=True
        )
        from motion_runner.models import Turn
        from motion_runner.recall import record

        turn = Turn.objects.select_related("motion", "agent").get()
        pick = random.Random(35)
        queries = [
            " ".join(word(pick.randint(1, VOCABULARY)) for _ in range(pick.choice((1, 1, 2))))
            for _ in range(QUERIES)
        ]
        hits = sum(bool(record.search(turn, q)["results"]) for q in queries)
        print(f"{hits} of {len(queries)} queries find something", flush=True)
        indexed = timed(lambda t, q: record.search(t, q), turn, queries, args.runs)
        baseline = timed(ilike_search, turn, queries, args.baseline_runs)
        p95, base95 = percentile(indexed, 95), percentile(baseline, 95)
        print(f"search p50 {percentile(indexed, 50):.1f} ms, p95 {p95:.1f} ms, max {max(indexed):.1f} ms")
        print(
            f"ILIKE  p50 {percentile(baseline, 50):.1f} ms, p95 {base95:.1f} ms, max {max(baseline):.1f} ms"
        )
        figure("search p95 (1/ms)", 1 / p95, "1/ms")
        ratio("search p95 vs unindexed ILIKE", p95, base95, "ms", 1.0, lower_is_better=True)
        met = p95 < 100
        print(f"absolute: search p95 {p95:.1f} ms (target < 100 ms): {'met' if met else 'NOT met'}; {load()}")


if __name__ == "__main__":
    main()
