#!/usr/bin/env python
"""The record server's `search` (motion_runner/recall/record.py: the turn's scope, the full-text
index, newest first, 10 results) for every kind of query people type (issue 41), at several sizes
grown in one run, each beside its baseline measured in the same run at the same size: the same
scope, kinds, filters and order with the text matched by `ILIKE '%word%'` per word and the
author by `lower(sender)`, with the planner's index scans turned off (the unindexed scan).

The corpus: 1,000 Motions open to the signed-in, the agent among each one's agents (its search
reaches all of them: the widest scope); posts of 8-24 words drawn from a 5,000-word vocabulary by
frequency (word k about 1/k as often as the first); one post in twenty names a person; a third of
the posts are the agent's, the rest 50 people's.

The queries, drawn as people type them, by frequency (not uniformly by rank), per class:
  rare         one word from the rarer half of the vocabulary
  common       one word drawn by frequency (the words people type most)
  two common   two words drawn by frequency
  phrase       four words in a row from a post (what someone remembers of it)
  author       a person's posts (the author filter) holding a word drawn by frequency
  name         a person's name, as a word in the text

    DATABASE_URL=postgres://…/<db> .venv/bin/python bench/record_search.py [--sizes 100000,1000000,3000000]
        [--keep bench_search]

`--keep PREFIX` (PostgreSQL): each size's table is kept in a database of its own, `PREFIX_<size>`,
made from the previous size's as a template and grown, and reused as it is by the next run (a 3M
fill takes a quarter of an hour; a run on kept databases only measures). Drop them by hand.

On SQLite (no DATABASE_URL: the embedded default) the same, on the FTS5 path, the baseline a
`NOT INDEXED` scan with `LIKE`. Targets (issue 41): at 1,000,000 messages every class ≥ 10× its
baseline; from 1,000,000 to 3,000,000 each class's p95 grows no more than 1.5×.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from _django import bench_database, percentile
from _figures import load, ratio

VOCABULARY = 5_000
MOTIONS = 1_000
PEOPLE = 50
CLASSES = ("rare", "common", "two common", "phrase", "author", "name")


def word(rank: int) -> str:
    return f"w{rank}x"  # no English stop word, no stem to strip: every rank a word of its own


def by_frequency(pick: random.Random) -> str:
    """A word drawn as the text draws them: rank k with probability about 1/k."""
    return word(max(1, math.floor(math.exp(pick.random() * math.log(VOCABULARY)))))


def queries(pick: random.Random, per_class: int) -> dict[str, list[tuple[str, str]]]:
    """(query, author) pairs per class."""
    return {
        "rare": [(word(pick.randint(VOCABULARY // 2, VOCABULARY)), "") for _ in range(per_class)],
        "common": [(by_frequency(pick), "") for _ in range(per_class)],
        "two common": [(f"{by_frequency(pick)} {by_frequency(pick)}", "") for _ in range(per_class)],
        "phrase": [],  # four words of a post someone remembers: drawn once the first posts exist
        "author": [(by_frequency(pick), f"person{pick.randrange(PEOPLE)}") for _ in range(per_class)],
        "name": [(f"person{pick.randrange(PEOPLE)}", "") for _ in range(per_class)],
    }


def phrases(pick: random.Random, count: int, among: int) -> list[tuple[str, str]]:
    from motion_runner.models import Message

    posts = Message.objects.order_by("created_at", "id").values_list("text", flat=True)
    found = []
    for _ in range(count):
        said = posts[pick.randrange(among)].split()
        start = pick.randrange(len(said) - 3)
        found.append((" ".join(said[start : start + 4]), ""))
    return found


def setup_scope():
    from motion_runner.models import Agent, Motion, Turn, TurnStatus, Visibility

    agent = Agent.objects.create(name="magent")
    Motion.objects.bulk_create(
        Motion(slug=f"m{n}", title=f"M {n}", visibility=Visibility.SIGNED_IN) for n in range(MOTIONS)
    )
    agent.motions.add(*Motion.objects.all())
    Turn.objects.create(motion_id="m0", agent=agent, status=TurnStatus.RUNNING)


def grow_postgres(first: int, last: int) -> None:
    """Posts first+1 .. last, a second apart (the newest the highest), the text index rebuilt
    once after the rows. By hand: millions of rows through the ORM would take the bench's hour."""
    from django.db import connection

    from motion_runner.sql import message_search

    with connection.cursor() as cursor:
        cursor.execute(f"DROP INDEX IF EXISTS {message_search.TEXT_INDEX}")
        # A word of rank k in 1 .. VOCABULARY is drawn with probability ~ 1/k: exp(random * ln V).
        cursor.execute(
            """
            INSERT INTO motion_runner_message
              (id, motion_id, sender, source, kind, text, tool_name, tool_id, is_error,
               harness_message_id, session_id, model_backend, effort, stop_reason, cwd, source_file,
               sign_in, created_at)
            SELECT gen_random_uuid(), 'm' || (g %% %(motions)s),
                   CASE WHEN g %% 3 = 0 THEN 'magent' ELSE 'person' || (g %% %(people)s) END,
                   'web', 'text',
                   (SELECT string_agg('w' || floor(exp(random() * ln(%(vocabulary)s)))::int || 'x', ' ')
                      FROM generate_series(1, 8 + (g %% 17)))
                   || CASE WHEN g %% 20 = 7 THEN ' person' || ((g / 20) %% %(people)s) ELSE '' END,
                   '', '', false, '', '', '', '', '', '', '', '',
                   timestamptz '2026-01-01' + make_interval(secs => g)
              FROM generate_series(%(first)s + 1, %(last)s) AS g
            """,
            {"motions": MOTIONS, "people": PEOPLE, "vocabulary": VOCABULARY, "first": first, "last": last},
        )
        cursor.execute(
            f"CREATE INDEX {message_search.TEXT_INDEX} ON motion_runner_message "
            f"USING gin ({message_search.STORED_COLUMN})"
        )
    connection.cursor().execute("VACUUM ANALYZE")  # outside a transaction: autocommit


def grow_sqlite(first: int, last: int) -> None:
    """The same posts on SQLite, in batches; the FTS5 table rebuilt once after the rows."""
    import datetime as dt
    import uuid

    from django.db import connection

    from motion_runner.sql import message_search

    pick = random.Random(first)
    start = dt.datetime(2026, 1, 1)
    with connection.cursor() as cursor:
        for trigger in ("ai", "ad", "au"):
            cursor.execute(f"DROP TRIGGER IF EXISTS {message_search.FTS_TABLE}_{trigger}")
        cursor.execute(f"DROP TABLE IF EXISTS {message_search.FTS_TABLE}")
        for base in range(first + 1, last + 1, 50_000):
            rows = []
            for g in range(base, min(last, base + 49_999) + 1):
                text = " ".join(by_frequency(pick) for _ in range(8 + g % 17))
                if g % 20 == 7:
                    text += f" person{(g // 20) % PEOPLE}"
                sender = "magent" if g % 3 == 0 else f"person{g % PEOPLE}"
                at = (start + dt.timedelta(seconds=g)).strftime("%Y-%m-%d %H:%M:%S.%f")
                rows.append((uuid.uuid4().hex, f"m{g % MOTIONS}", sender, text, at))
            cursor.executemany(
                "INSERT INTO motion_runner_message (id, motion_id, sender, source, kind, text, tool_name,"
                " tool_id, is_error, harness_message_id, session_id, model_backend, effort, stop_reason,"
                " cwd, source_file, sign_in, created_at) VALUES (%s, %s, %s, 'web', 'text', %s, '', '',"
                " 0, '', '', '', '', '', '', '', '', %s)",
                rows,
            )
    message_search.ensure_sqlite_index(connection)
    connection.cursor().execute("ANALYZE")


def point_at(database: str) -> None:
    """This process's connection on `database` from its next query."""
    from django.db import connection

    connection.close()
    if hasattr(connection, "close_pool"):
        connection.close_pool()  # a pool keeps the database it was opened on
    connection.settings_dict["NAME"] = database


def interleaved_growth(prefix: str, sizes: list[int], classes: list[str], asked, runs: int) -> None:
    """Each class's p95 at each kept size, the sizes taken in turn run by run (not one size's
    minutes, then the next's), so a shared machine's load falls on every size alike: the growth
    from one size to the next under the same load."""
    from motion_runner.models import Turn

    spent: dict[tuple[str, int], list[float]] = {(kind, size): [] for kind in classes for size in sizes}
    for kind in classes:
        for turn_round in range(runs + 1):  # the first round warms each database's pages
            for size in sizes:
                point_at(f"{prefix}_{size}")
                turn = Turn.objects.select_related("motion", "agent").get()
                times = timed(indexed, turn, asked[kind], 1)
                if turn_round:
                    spent[kind, size] += times
    print(f"\ninterleaved ({runs} runs, the sizes in turn); {load()}")
    for kind in classes:
        p95s = [percentile(spent[kind, size], 95) for size in sizes]
        steps = "; ".join(
            f"{small:,} -> {large:,}: {p95s[n + 1] / p95s[n]:.2f}x"
            for n, (small, large) in enumerate(zip(sizes, sizes[1:], strict=False))
        )
        print(
            f"  {kind:<10} p95 "
            + " / ".join(f"{p:.1f} ms" for p in p95s)
            + f"; growth {steps} (target <= 1.5x)"
        )


def kept_database(prefix: str, size: int, previous: str | None) -> str:
    """`PREFIX_<size>` made (a copy of `previous`, or migrated empty with the scope) if missing,
    and this process's connection pointed at it. Its name."""
    from django.core.management import call_command
    from django.db import connection

    name = f"{prefix}_{size}"
    point_at("postgres")
    with connection.cursor() as cursor:
        assert cursor.connection.info.dbname == "postgres"
        cursor.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        made = cursor.fetchone() is None
        if made:
            template = f" TEMPLATE {previous}" if previous else ""
            cursor.execute(f"CREATE DATABASE {name}{template}")
    point_at(name)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_database()")
        assert cursor.fetchone()[0] == name, "still on another database: refusing to fill it"
    if made and not previous:
        call_command("migrate", verbosity=0)
        setup_scope()
    return name


def unindexed(turn, query: str, author: str) -> list:
    """The baseline: the tool's scope, kinds, author and order, each word an `ILIKE`/`LIKE`,
    and no index scan (a plain scan of the table)."""
    from django.db import connection, transaction

    from motion_runner.recall import record
    from motion_runner.sql.message_search import words

    reach = [m for m in record.scope(turn).values_list("slug", flat=True)]
    kinds = list(record.SAID_KINDS)
    like = "ILIKE" if connection.vendor == "postgresql" else "LIKE"
    table = "motion_runner_message" + (" NOT INDEXED" if connection.vendor == "sqlite" else "")
    where = [
        f"motion_id IN ({', '.join(['%s'] * len(reach))})",
        f"kind IN ({', '.join(['%s'] * len(kinds))})",
    ]
    params: list = [*reach, *kinds]
    for each in words(query):
        where.append(f"text {like} %s")
        params.append(f"%{each}%")
    if author:
        where.append("lower(sender) = lower(%s)")
        params.append(author)
    sql = f"SELECT id FROM {table} WHERE {' AND '.join(where)} ORDER BY created_at DESC, id DESC LIMIT 10"
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for scan in ("enable_indexscan", "enable_bitmapscan", "enable_indexonlyscan"):
                cursor.execute(f"SET LOCAL {scan} = off")
        cursor.execute(sql, params)
        return cursor.fetchall()


def indexed(turn, query: str, author: str) -> list:
    from motion_runner.recall import record

    return record.search(turn, query, record.SearchFilters(author=author))["results"]


def timed(search, turn, asked: list[tuple[str, str]], runs: int) -> list[float]:
    for query, author in asked:
        search(turn, query, author)  # warm: a server in use has its pages cached
    spent: list[float] = []
    for _ in range(runs):
        for query, author in asked:
            began = time.perf_counter()
            search(turn, query, author)
            spent.append((time.perf_counter() - began) * 1000)
    return spent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100000,1000000,3000000")
    parser.add_argument("--per-class", type=int, default=8)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--baseline-runs", type=int, default=1, help="the scan is slow: fewer runs")
    parser.add_argument("--keep", metavar="PREFIX", help="PostgreSQL: keep each size's table (see above)")
    parser.add_argument("--classes", default=",".join(CLASSES), help="only these classes")
    parser.add_argument(
        "--interleaved-runs",
        type=int,
        default=0,
        help="with --keep: then each class's growth, the sizes in turn",
    )
    args = parser.parse_args()
    sizes = [int(size) for size in args.sizes.split(",")]
    classes = [kind for kind in CLASSES if kind in args.classes.split(",")]
    if args.keep:
        import django

        django.setup()
        from django.db import connection

        asked = run(connection, sizes, classes, args, keep=args.keep)
        if args.interleaved_runs:
            interleaved_growth(args.keep, sizes, classes, asked, args.interleaved_runs)
        return
    with bench_database("record_search") as connection:
        setup_scope()
        run(connection, sizes, classes, args, keep=None)


def run(connection, sizes: list[int], classes: list[str], args, keep: str | None) -> dict:
    from motion_runner.models import Message, Turn

    grow = grow_postgres if connection.vendor == "postgresql" else grow_sqlite
    asked = queries(random.Random(41), args.per_class)
    p95s: dict[tuple[str, int], float] = {}
    done = 0
    kept = None
    for size in sizes:
        began = time.perf_counter()
        if keep:
            kept = kept_database(keep, size, kept)
            done = Message.objects.count()
        if done < size:
            grow(done, size)
        if not asked["phrase"]:
            asked["phrase"] = phrases(random.Random(42), args.per_class, size)
        done = size
        turn = Turn.objects.select_related("motion", "agent").get()
        print(
            f"\n{connection.vendor}: {size:,} messages (grown in {time.perf_counter() - began:.0f} s); {load()}"
        )
        for kind in classes:
            found = sum(bool(indexed(turn, q, a)) for q, a in asked[kind])
            ours = timed(indexed, turn, asked[kind], args.runs)
            base = timed(unindexed, turn, asked[kind], args.baseline_runs)
            p95s[kind, size] = p95 = percentile(ours, 95)
            print(
                f"  {kind:<10} {found}/{len(asked[kind])} find something; search p50 "
                f"{percentile(ours, 50):8.1f} ms p95 {p95:8.1f} ms; scan p95 {percentile(base, 95):9.1f} ms",
                flush=True,
            )
            ratio(
                f"{connection.vendor} {kind} at {size:,} vs the unindexed scan",
                p95,
                percentile(base, 95),
                "ms",
                10.0,
                lower_is_better=True,
            )
    for small, large in zip(sizes, sizes[1:], strict=False):
        for kind in classes:
            growth = p95s[kind, large] / p95s[kind, small]
            verdict = "met" if growth <= 1.5 else "NOT met"
            print(f"growth: {kind} p95 {small:,} -> {large:,}: {growth:.2f}x (target <= 1.5x): {verdict}")
    return asked


if __name__ == "__main__":
    main()
