"""One error body for the whole API: {"error": {"status", "code", "detail", "fields"?}}."""

from __future__ import annotations

from rest_framework.views import exception_handler as drf_exception_handler


def exception_handler(exc, context):
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
