#!/usr/bin/env python3
"""Redaction on its corpora: how many of the secret shapes it takes out (coverage), how many
lines of ordinary tool output it alters (false positives), and its speed in MB a CPU second,
each beside baselines measured in the same run:

- `module`: motion_runner/ingest/redaction.py as it is in this checkout;
- `old module`: the same file at --old (default e4eb508, before issue 30), read from git;
- `detect-secrets`: Yelp's detect-secrets 1.5 plugins (every default plugin, its default
  filters), each finding's span replaced, when the package can be imported (--ds-path names a
  directory it was installed into with `pip install --target DIR detect-secrets==1.5.0`);
- `str.replace`: one pass over the text that changes nothing, the floor of any redaction.

No database. The corpora are tests/motion_runner/ingest/redaction_corpus.py (secrets, one line
each as a tool prints it) and ordinary_output.txt (source code, git logs, pip output, JSON,
UUIDs, hashes, data URIs, listings, logs). Speed is measured on the ordinary output cut into
strings of about 4 KB (a tool result's size), redacted whole, as the write path does.

  .venv/bin/python bench/redaction.py [--rounds 5] [--old e4eb508] [--ds-path /tmp/ds-site]
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
os.environ.setdefault("CELERY_BROKER_URL", "memory://")
MARK = "[REDACTED]"


def old_module(commit: str):
    """redaction.py as it was at `commit`, loaded beside today's (its relative imports work)."""
    source = subprocess.run(
        ["git", "show", f"{commit}:motion_runner/ingest/redaction.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    name = f"motion_runner.ingest._redaction_{commit}"
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "motion_runner.ingest"
    sys.modules[name] = module
    exec(compile(source, f"{commit}:redaction.py", "exec"), module.__dict__)
    return module


def detect_secrets_redactor(ds_path: str | None) -> Callable[[str], str] | None:
    if ds_path:
        sys.path.insert(0, ds_path)
    try:
        from detect_secrets.core.scan import _is_filtered_out, _scan_line
        from detect_secrets.settings import default_settings, get_plugins, get_settings
        from detect_secrets.util.code_snippet import get_code_snippet
    except ImportError:
        return None
    settings = default_settings()
    settings.__enter__()  # kept for the run
    # As detect-secrets' own scan_line for a string that is no file: that filter off.
    get_settings().disable_filters("detect_secrets.filters.common.is_invalid_file")
    plugins = get_plugins()

    def redact(text: str) -> str:
        out = []
        for line in text.split("\n"):
            context = get_code_snippet(lines=[line], line_number=1)
            spans = []
            for plugin in plugins:
                for found in _scan_line(
                    plugin=plugin,
                    filename="adhoc",
                    line=line,
                    line_number=0,
                    enable_eager_search=False,
                    context=context,
                ):
                    if _is_filtered_out(
                        required_filter_parameters=["context"],
                        filename="adhoc",
                        secret=found.secret_value,
                        plugin=plugin,
                        line=line,
                        context=context,
                    ):
                        continue
                    value = found.secret_value or ""
                    # A regex plugin reports its group (`ghp` of a GitHub token): take the whole match.
                    for pattern in getattr(plugin, "denylist", ()):
                        for match in pattern.finditer(line):
                            if value in match.group(0):
                                spans.append(match.span())
                    if len(value) >= 4:
                        spans += [m.span() for m in re.finditer(re.escape(value), line)]
            for start, end in sorted(spans, reverse=True):
                line = line[:start] + MARK + line[end:]
            out.append(line)
        return "\n".join(out)

    return redact


def chunks(lines: list[str], size: int = 4000) -> list[str]:
    out, current, length = [], [], 0
    for line in lines:
        current.append(line)
        length += len(line) + 1
        if length >= size:
            out.append("\n".join(current))
            current, length = [], 0
    if current:
        out.append("\n".join(current))
    return out


def measure(
    name: str, redact: Callable[[str], str], secrets, ordinary: list[str], texts: list[str], rounds: int
):
    missed = [s for s in secrets if s.leaked_in(redact(s.line))]
    item6 = [s for s in secrets if s.item6]
    missed6 = [s for s in missed if s.item6]
    altered = [line for line in ordinary if redact(line) != line]
    size = sum(len(t.encode()) for t in texts)
    times = []
    for _ in range(rounds):
        gc.collect()
        started = time.process_time()
        for text in texts:
            redact(text)
        times.append(time.process_time() - started)
    times.sort()
    return {
        "name": name,
        "covered": len(secrets) - len(missed),
        "total": len(secrets),
        "item6": f"{len(item6) - len(missed6)}/{len(item6)}",
        "altered": len(altered),
        "lines": len(ordinary),
        "mb_s": size / times[len(times) // 2] / 1e6,
        "missed": missed,
        "altered_lines": altered,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--old", default="e4eb508", help="The commit whose redaction.py is the baseline.")
    parser.add_argument("--ds-path", default=os.environ.get("DETECT_SECRETS_PATH"))
    parser.add_argument("--verbose", action="store_true", help="Name every missed secret and altered line.")
    args = parser.parse_args()

    import django

    django.setup()
    from motion_runner.ingest import redaction
    from tests.motion_runner.ingest.redaction_corpus import ORDINARY_LINES, SECRETS

    texts = chunks(ORDINARY_LINES)
    candidates: list[tuple[str, Callable[[str], str]]] = [
        ("str.replace", lambda text: text.replace(MARK, MARK)),
        (f"old module ({args.old})", old_module(args.old).redact),
        ("module", redaction.redact),
    ]
    if (ds := detect_secrets_redactor(args.ds_path)) is not None:
        candidates.append(("detect-secrets 1.5", ds))
        candidates.append(("module, then detect-secrets", lambda text: ds(redaction.redact(text))))
    else:
        print("detect-secrets not importable: its rows are left out (--ds-path)")
    load = os.getloadavg()[0]
    print(
        f"{len(SECRETS)} secrets, {len(ORDINARY_LINES)} ordinary lines, {len(texts)} strings of ~4 KB; load {load:.2f}"
    )
    print(f"{'candidate':32} {'coverage':>16} {'item 6':>7} {'FP lines':>14} {'MB/s':>7} {'× module':>8}")
    rows = [measure(name, redact, SECRETS, ORDINARY_LINES, texts, args.rounds) for name, redact in candidates]
    module_speed = next(row["mb_s"] for row in rows if row["name"] == "module")
    for row in rows:
        coverage = f"{row['covered']}/{row['total']} {100 * row['covered'] / row['total']:5.1f}%"
        fp = f"{row['altered']}/{row['lines']} {100 * row['altered'] / row['lines']:4.2f}%"
        print(
            f"{row['name']:32} {coverage:>16} {row['item6']:>7} {fp:>14} {row['mb_s']:7.2f} {row['mb_s'] / module_speed:8.2f}"
        )
    for row in rows[1:]:
        if args.verbose or row["name"] == "module":
            print(f"\n{row['name']}: missed {[s.shape for s in row['missed']]}")
            for line in row["altered_lines"][: 40 if args.verbose else 10]:
                print(f"  altered: {line[:140]!r}")


if __name__ == "__main__":
    main()
