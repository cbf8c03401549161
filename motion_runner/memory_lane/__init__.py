"""memory-lane's integration, in a room of its own (docs/memory-lane.md).

memory-lane (`cryptograss/memory-lane`) is the Django site the apps are meant to live in. Everything
that exists only because of it is here: the `memory_lane` record binding (`binding.py`: the apps'
rows written into memory-lane's `conversations` tables too, shaped as its writers shape them,
`rows.py`), its client contract (`routes.py`: the runner's stream, quiet and held routes, the
transcript watcher's `/api/ingest/`) and the runner keys its vault gives (`runner_keys.py`). The
transcript watcher's lines (`transcripts/remote.py`) belong here too and move in next.

A standalone install may ignore this package: with `MOTION_RUNNER_RECORD = "own"` (the default)
nothing here writes anywhere but the apps' own tables, and its routes answer only memory-lane's
clients. The rest of the runner names it only where it is chosen: the binding by its dotted path
(`motion_runner.record.BINDINGS`), the routes in `motion_runner/urls.py`, the runner keys in the
settings' authentication classes (import-linter's contract "memory-lane-only-where-chosen").
"""
