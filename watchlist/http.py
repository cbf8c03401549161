"""Moved to motion_runner/lib/http.py (the neutral lower layer). This name stays only for
bench/watch_cycle.py, which another change owns; import from motion_runner.lib.http."""

from motion_runner.lib.http import HttpClient

__all__ = ["HttpClient"]
