"""Motion Runner, the lower app: agents, Motions and their Messages, the write path, the runner,
the thread and its API. Its parts are sub-packages (the README's package table says what each
owns); its top holds the Django plumbing only.
"""

# The Celery app is loaded with Django so that @shared_task binds to it.
from .celery import app as celery_app

__all__ = ("celery_app",)
