"""`python -m motion_runner.recall ENV_FILE`: the record server, its pass and database read from
ENV_FILE (a JSON object of environment variables, recall/passes.py) before Django starts."""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m motion_runner.recall ENV_FILE", file=sys.stderr)
        return 2
    try:
        with open(argv[0], encoding="utf-8") as handle:
            os.environ.update({str(k): str(v) for k, v in json.load(handle).items()})
    except (OSError, ValueError) as exc:
        print(f"motion-record: refused: cannot read its pass ({exc})", file=sys.stderr)
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "motion_runner.settings")
    import django

    django.setup()
    from motion_runner.recall.server import serve

    return serve()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
