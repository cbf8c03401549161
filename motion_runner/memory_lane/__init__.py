"""memory-lane's integration, in a room of its own (docs/memory-lane.md).

memory-lane (`cryptograss/memory-lane`) is the Django site the apps are meant to live in. Everything
that exists only because of it is here:

- the `memory_lane` record binding (`binding.py`: the apps' rows written into memory-lane's
  `conversations` tables too), with its concerns mixed in from a module each: `rows.py` (a Message
  shaped as memory-lane's writers shape it), `renames.py` (a Mood is a Motion, renamed both ways),
  `host_posts.py` (a post or a ■ on memory-lane's page reaching the apps), `signin.py` (what a
  composer post's device vouches for), `held.py` (holds where memory-lane's clients and page read
  them), `host.py` (the host's models by role, the flag that stops echoes);
- the switch-over's fence (`fence.py`: the agents memory-lane's poller still wakes);
- its client contract (`routes.py`: the runner's stream, quiet and held routes, the transcript
  watcher's `/api/ingest/`) and the runner keys its vault gives (`runner_keys.py`);
- the transcript watcher's lines (`remote.py`: read as the local importer reads a file; the
  unclaimed sessions' spool path, which the stream route asks too, is `ingest/sessions.spool_path`);
- its settings rows as the room's steering and timing (`steering.py`, `timing.py`: one source for
  the menus and the dials' twins), read once a tick (`reads.py`); a post taken back in either
  record (`changes.py`); the clocks that rode on its poller's pulse, run from the beat (`pulse.py`).

A standalone install may ignore this package: with `MOTION_RUNNER_RECORD = "own"` (the default)
nothing here writes anywhere but the apps' own tables, and its routes answer only memory-lane's
clients. The rest of the apps name it only where it is chosen (import-linter's contract
"memory-lane-only-where-chosen"): the binding by its dotted path (`motion_runner.record.BINDINGS`),
the routes in `motion_runner/urls.py`, the hold receiver in `MotionRunnerConfig.ready`, the runner
keys in `AGENT_AUTHENTICATION_CLASSES` and DRF's authentication classes. It hears the rest through
`motion_runner/signals.py`: `hold_changed` (sent by `wakes/holds.py`); it sends `host_post_made`
and `host_stop_pressed`, which the write path and the runner hear.
"""
