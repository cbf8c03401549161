"""The schema says what the API answers: every operation's error statuses, in the one error
body (motion_runner/api/errors.py), so a client (and schemathesis) finds each answer documented."""

from __future__ import annotations

from typing import Any

ERROR_BODY = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["status", "code", "detail"],
            "properties": {
                "status": {"type": "integer"},
                "code": {"type": "string"},
                "detail": {"type": "string"},
                "fields": {"type": "object", "description": "Per field, what is wrong with it."},
            },
        }
    },
}
# memory-lane's routes answer errors in memory-lane's shape, which its clients read.
FLAT_ERROR_BODY = {"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}}
MEMORY_LANE_PATHS = ("/api/moods/", "/api/ingest/")
ALWAYS = {
    "400": "A bad parameter or body, with the reason.",
    "401": "No credential, or a wrong or revoked agent key.",
    "403": "Signed in, but this is not yours to do.",
    "404": "No such thing, or not one the caller may read.",
}
WRITES = {
    "409": "Conflicts with what is already there.",
    "413": "The body is too large.",
    "415": "Not a JSON body.",
}


def add_error_responses(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """drf-spectacular postprocessing hook."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas["Error"], schemas["FlatError"] = ERROR_BODY, FLAT_ERROR_BODY
    for route, path in result.get("paths", {}).items():
        flat = route.startswith(MEMORY_LANE_PATHS)
        reference = {"$ref": "#/components/schemas/FlatError" if flat else "#/components/schemas/Error"}
        for method, operation in path.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            statuses = dict(ALWAYS)
            if method in ("post", "put", "patch"):
                statuses.update(WRITES)
            for status, description in statuses.items():
                response = operation["responses"].setdefault(status, {"description": description})
                response.setdefault("content", {"application/json": {"schema": reference}})
    return result
