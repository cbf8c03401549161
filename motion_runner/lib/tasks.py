"""Celery tasks by their registered name, for the modules below the one that declares a task.

A task module imports the code it runs (runner/tasks.py imports runner/turns.py); the code that
queues the next run (turns.py queueing a turn) would have to import the task module back, a
cycle. It asks Celery's own registry instead: the name is the task's public id anyway (it stays
byte for byte), and the object found is the registered task itself, so `.delay`, `.apply_async`
and a test's patch of either behave exactly as on the imported name.
"""

from __future__ import annotations

from celery import Task, current_app


def task_named(name: str) -> Task:
    """The registered task (its module was imported by its app's AppConfig.ready)."""
    return current_app.tasks[name]
