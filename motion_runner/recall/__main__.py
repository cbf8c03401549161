"""`python -m motion_runner.recall ENV_FILE`: the record server, its pass and database read from
ENV_FILE (a JSON object of environment variables, recall/passes.py) before Django starts."""

from __future__ import annotations

import json
import os
import sys

from django.core.management import execute_from_command_line


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
    # Settings read the environment as they load: only now may Django start (the command below).
    execute_from_command_line(["manage.py", "record_mcp"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
