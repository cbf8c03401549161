"""Moved to motion_runner/lib/http/ (the neutral lower layer). This name stays only for
bench/watch_cycle.py, which another change owns; import from motion_runner.lib.http.client."""

from motion_runner.lib.http.client import HttpClient

__all__ = ["HttpClient"]
