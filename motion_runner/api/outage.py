"""The database away (restarting, unreachable, its pool timed out): 503 with Retry-After, in the
error body the route's clients read, instead of Django's HTML 500. A client that sends again after
Retry-After keeps its batch (memory-lane's watcher does; its runner gives up on a 503, and the
transcript brings those lines later: docs/memory-lane.md); the stream's ids make a retry store each
line once."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, JsonResponse

from ..runner.db_retry import is_outage

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
DETAIL = "The database is not answering for a moment; send the same request again shortly."
# memory-lane's routes answer {"error": "<text>"} (memory_lane/routes.py), the rest of the API its
# structured error (api/errors.py).
FLAT_ERROR_PATHS = ("/api/moods/", "/api/ingest/")


def outage_response(path: str, *, flat: bool | None = None) -> HttpResponse:
    """`flat`: memory-lane's body; by default, decided by the path."""
    if flat if flat is not None else path.startswith(FLAT_ERROR_PATHS):
        response: HttpResponse = JsonResponse({"error": DETAIL}, status=503)
    elif path.startswith("/api/"):
        response = JsonResponse(
            {"error": {"status": 503, "code": "database_unavailable", "detail": DETAIL}}, status=503
        )
    else:
        response = HttpResponse(DETAIL, status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def answer_if_away(exc: BaseException, path: str, *, flat: bool | None = None) -> HttpResponse | None:
    """The 503 when `exc` says the database is away, else None. Called by the API's exception
    handlers (so a host project's API answers it without this module's middleware) and by the
    middleware (pages and views outside DRF)."""
    if not isinstance(exc, DatabaseError) or not is_outage(exc):
        return None
    log.warning("%s: the database is away (%s); answered 503", path, exc)
    return outage_response(path, flat=flat)


class DatabaseAwayMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exc: Exception) -> HttpResponse | None:
        return answer_if_away(exc, request.path)
