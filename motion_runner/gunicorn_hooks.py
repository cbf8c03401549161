"""gunicorn's hooks for the web process: `gunicorn -c python:motion_runner.gunicorn_hooks …`, as
bin/serve and docker-compose.yml start it (a host's own gunicorn may name it too)."""

from __future__ import annotations

import signal
import threading
from typing import Any


def post_worker_init(worker: Any) -> None:
    """A worker asked to stop (SIGTERM from the arbiter: bin/serve's Ctrl-C, a deploy) answers its
    waiting long polls at once, then stops as gunicorn does. Without it its graceful exit waited for
    every poll in flight (up to THREAD_POLL_WAIT_SECONDS) and bin/serve killed it at its grace."""
    stopping = signal.getsignal(signal.SIGTERM)

    def stop(signum: int, frame: Any) -> None:
        # From a thread of its own: the bell's lock may be held by the thread this signal interrupts.
        threading.Thread(target=close_readers, name="close-readers", daemon=True).start()
        if callable(stopping):
            stopping(signum, frame)

    signal.signal(signal.SIGTERM, stop)


def close_readers() -> None:
    # Imported here: gunicorn reads this module before the app (and Django) is loaded.
    from motion_runner.thread.bell import bell

    bell.close_readers()
