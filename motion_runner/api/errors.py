"""One error body for the whole API: {"error": {"status", "code", "detail", "fields"?}}."""

from __future__ import annotations

from django.http import JsonResponse
from django.views.defaults import page_not_found
from rest_framework.views import exception_handler as drf_exception_handler

from .outage import answer_if_away


def exception_handler(exc, context):
    if (away := answer_if_away(exc, context["request"].path)) is not None:
        return away
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    code = getattr(exc, "default_code", "error")
    body: dict = {"status": response.status_code, "code": code}
    if isinstance(data, dict) and set(data) <= {"detail"}:
        body["detail"] = str(data.get("detail", ""))
        codes = exc.get_codes() if hasattr(exc, "get_codes") else None
        if isinstance(codes, dict) and isinstance(codes.get("detail"), str):
            body["code"] = codes["detail"]
    else:
        body["detail"] = "The request was not valid."
        body["fields"] = data
    response.data = {"error": body}
    return response


def not_found(request, exception=None):
    """Django's 404 (a path no route matches): the API's error body under /api/, a page elsewhere."""
    if request.path.startswith(("/api/moods/", "/api/ingest/")):
        # memory-lane's routes answer in memory-lane's shape, which its clients read.
        return JsonResponse({"error": "No such path."}, status=404)
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"error": {"status": 404, "code": "not_found", "detail": "No such path."}}, status=404
        )
    return page_not_found(request, exception)
