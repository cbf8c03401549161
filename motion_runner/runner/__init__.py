"""The runner: a queued Turn claimed once, its harness launched and watched, every event written
as it comes, and the turn ended clearly (turns.py launches, process.py spawns the harness and
reads its lines, turn_run.py streams, live_text.py hands the words being typed to the page,
ending.py ends, monitor.py is the base of a turn's watchers, limits.py its clocks, resume.py the
session it resumes and how full that is); beside them the stop (stopping.py, stop_bell.py), the
lease sweep (reclaim.py), the queues (routing.py), PostgreSQL's passing refusals (db_retry.py)
and the Celery tasks, with a stopping worker's own stop (tasks.py).

It imports the rest of motion_runner (models, harnesses, the write path, system lines, the
seams in signals.py) and lib/; never wakes or watchlist, which reach it only through the hooks
and signals of motion_runner/signals.py.
"""
