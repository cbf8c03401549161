"""What every page's header says about the person reading it."""

from __future__ import annotations

SIGN_IN_LABELS = {
    "ssh": "signed in with an SSH key",
    "wiki": "signed in with the wiki",
    "password": "signed in with a password",
}


def sign_in_of(request) -> str:
    """How this session signed in: the SSH page and the wiki say so; anything else is a password."""
    return request.session.get("sign_in", "password") if hasattr(request, "session") else ""


def viewer(request) -> dict:
    if not request.user.is_authenticated:
        return {"viewer": None}
    sign_in = sign_in_of(request)
    return {"viewer": {"name": request.user.get_username(), "sign_in": SIGN_IN_LABELS.get(sign_in, sign_in)}}
