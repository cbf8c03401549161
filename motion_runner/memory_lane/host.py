"""The host's record as the memory_lane binding reaches it: its models by role, its ids, and the
flag that tells a row the binding is writing from one anything else wrote (so nothing echoes back)."""

from __future__ import annotations

import contextvars
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from django.apps import apps
from django.db import models

from ..conf import app_settings as settings

# memory-lane's mood runner marks its lines so; a host row with it came from here.
SOURCE_FILE = "ingest-mood-runner"

_writing: contextvars.ContextVar[bool] = contextvars.ContextVar("memory_lane_writing", default=False)


@contextmanager
def writing() -> Iterator[None]:
    """While set, a save of the host's models is the binding's own: its receivers hand nothing back."""
    token = _writing.set(True)
    try:
        yield
    finally:
        _writing.reset(token)


def is_writing() -> bool:
    return _writing.get()


def host_model(role: str) -> type[models.Model]:
    """The host model of a role (`mood`, `message`, …), as MOTION_RUNNER_RECORD_MODELS names it."""
    return apps.get_model(settings.MOTION_RUNNER_RECORD_MODELS[role])


def as_uuid(value: str) -> uuid.UUID | None:
    """memory-lane's session ids and message ids are UUIDs; anything else is None."""
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
