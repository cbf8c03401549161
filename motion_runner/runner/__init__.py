"""The runner: a queued Turn claimed once, its harness launched and watched, every event written
as it comes, and the turn ended clearly (turns.py launches, turn_run.py streams, ending.py ends,
monitor.py is the base of a turn's watchers); its stop bell, lease sweep and routing beside them.

It imports the rest of motion_runner (models, harnesses, the write path, system lines, the
seams in signals.py) and lib/; never wakes or watchlist, which reach it only through the hooks
and signals of motion_runner/signals.py.
"""
