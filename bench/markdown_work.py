#!/usr/bin/env python3
"""The thread's Markdown on hostile text: what one post and a cold read of a page cost now that a
text's render is bounded by work (motion_runner/thread/markup.py's `Meter`), beside the render as
it was (the same markdown-it options and nh3 clean, unmetered) measured in the same run.

- `worst post`: the costliest of the hostile shapes below, 19,990 characters each (under
  THREAD_MARKDOWN_MAX_CHARS): CPU a render, best of --rounds, before / now (target >= 3x).
- `cold page`: one read of a page of 50 hostile posts (the shapes in turn, each text distinct)
  with nothing cached: before / now (target >= 2x), and now beside a cold page of 50 dense
  ordinary posts of the same length (tables, bold bullets, lists of paths and links) rendered now:
  a hostile page may cost at most twice an ordinary dense one (target >= 0.5x).
- `prose`: this project's docs cut into 20,000-character posts: now / before, the meter's cost on
  ordinary text (target: >= 0.8x, at most 25 % slower).

No database, no cache: the renders are called directly (`_render`), as a cold cache would.

  .venv/bin/python bench/markdown_work.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")

HOSTILE = [
    "![",
    "[",
    "[a](",
    "*a",
    "_a",
    "~~a",
    "&#1;",
    "- a\n",
    "# a\n",
    "a\n\n",
    "|a|b|\n|-|-|\n",
    "`a",
    "a\n",
    "> a\n",
    "http://a.b/ ",
    "a@b.co ",
]
LENGTH = 19_990


def before_renderer():
    """The render as it was before the meter: the same options, rules and clean, nothing counted."""
    import nh3
    from markdown_it import MarkdownIt

    from motion_runner.thread import markup

    md = MarkdownIt("commonmark", {"linkify": True, "html": False, "typographer": False, "breaks": True})
    md.enable(["linkify", "table", "strikethrough"])

    def render(text: str) -> str:
        html = md.render(text)
        return nh3.clean(
            html,
            tags=markup.ALLOWED_TAGS,
            attributes=markup.ALLOWED_ATTRIBUTES,
            url_schemes=markup.ALLOWED_SCHEMES,
            link_rel="noopener noreferrer nofollow",
            set_tag_attribute_values={"a": {"target": "_blank"}},
            filter_style_properties={"text-align"},
        ).strip()

    return render


def dense_post(seed: int) -> str:
    """About 20,000 characters of the densest ordinary Markdown agents write: tables, bullets with
    bold and code, lists of paths and links."""
    words = "runner turn ledger wake motion agent session harness cursor tests api views".split()
    pick = random.Random(seed).choice
    kind = seed % 3
    text = "| a | b | c | d | e |\n|---|---|---|---|---|\n" if kind == 0 else ""
    while len(text) < LENGTH:
        if kind == 0:
            text += "| " + " | ".join(pick(words) for _ in range(5)) + " |\n"
        elif kind == 1:
            text += f"- **{pick(words)}**: {pick(words)} `{pick(words)}`\n"
        else:
            text += (
                f"- [`{pick(words)}/{pick(words)}.py`](https://github.com/a/b/blob/main/{pick(words)}.py)\n"
            )
    return text[:LENGTH]


def cpu(render, texts: list[str]) -> float:
    started = time.process_time()
    for text in texts:
        render(text)
    return time.process_time() - started


def best(render, texts: list[str], rounds: int) -> float:
    return min(cpu(render, texts) for _ in range(rounds))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import logging

    import django

    django.setup()
    logging.disable(logging.INFO)  # markup says each text it shows plain
    from _figures import figure, ratio

    from motion_runner.thread import markup

    before, now = before_renderer(), markup._render
    met = True

    worst_before = worst_now = 0.0
    for unit in HOSTILE:
        text = unit * (LENGTH // len(unit))
        b, n = best(before, [text], args.rounds), best(now, [text], args.rounds)
        plain = markup.render_metered(markup.strip_request_tags(text))[0] is None
        print(
            f"  {unit!r:18} before {b * 1000:7.1f} ms  now {n * 1000:7.1f} ms  {'plain' if plain else 'rendered'}"
        )
        worst_before, worst_now = max(worst_before, b), max(worst_now, n)
    met &= ratio("worst hostile post, before / now", worst_now, worst_before, "s", 3, lower_is_better=True)

    page = [
        HOSTILE[i % len(HOSTILE)] * (LENGTH // len(HOSTILE[i % len(HOSTILE)])) + f" {i}" for i in range(50)
    ]
    b, n = best(before, page, args.rounds), best(now, page, args.rounds)
    figure("cold page of 50 hostile posts, now", 1 / n, "reads/s")
    met &= ratio("cold page of 50 hostile posts, before / now", n, b, "s", 2, lower_is_better=True)
    dense = [dense_post(i) for i in range(50)]
    assert not any(markup.render_metered(text)[0] is None for text in dense), "a dense post shown plain"
    d = best(now, dense, args.rounds)
    met &= ratio("cold page, 50 dense ordinary / 50 hostile posts", n, d, "s", 0.5, lower_is_better=True)

    docs = [path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]]
    prose = [doc[i : i + 20_000] for doc in docs for i in range(0, len(doc), 20_000)]
    shown_plain = sum(markup.render_metered(text)[0] is None for text in prose)
    print(f"  prose: {len(prose)} posts, {sum(map(len, prose)):,} characters, {shown_plain} shown plain")
    b, n = best(before, prose, args.rounds), best(now, prose, args.rounds)
    met &= ratio("prose, now / before (the meter's cost)", n, b, "s", 0.8, lower_is_better=True)
    met &= shown_plain == 0
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
