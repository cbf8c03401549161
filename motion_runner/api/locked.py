"""While a scram holds, nothing is posted to any Motion: 423 Locked with a body that says why, as
memory-lane answers its own posts during AZ5 (`locked_response`)."""

from __future__ import annotations

from rest_framework import status
from rest_framework.exceptions import APIException

from ..models import Scram


class ScramLocked(APIException):
    status_code = status.HTTP_423_LOCKED
    default_code = "scram"
    default_detail = "A scram holds: every agent is stopped and nothing is posted until it is lifted."


def refuse_during_scram() -> None:
    """Raise 423 while a scram holds; the post is not stored (call it before anything is written)."""
    scram = Scram.holding()
    if scram is not None:
        raise ScramLocked(
            f"A scram holds: every agent is stopped and nothing is posted until it is lifted "
            f"({scram.reason}, raised by {scram.raised_by} at {scram.raised_at:%Y-%m-%d %H:%M} UTC)."
        )
