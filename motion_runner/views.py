from __future__ import annotations

from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme

from .access import access, readable_motion
from .models import Motion


def motion_list(request):
    motions = access().readable(request.user, Motion.objects.all())
    return render(request, "motion_runner/motion_list.html", {"motions": motions})


def motion_thread(request, slug: str):
    motion = readable_motion(request.user, slug)
    return render(request, "motion_runner/thread.html", {"motion": motion})


def sign_in(request):
    """Sign in by signing a one-time challenge with your SSH key."""
    from .signin import SignInRefused, new_challenge, sign_in_with_ssh

    error = ""
    if request.method == "POST":
        try:
            sign_in_with_ssh(
                request, request.POST.get("username", "").strip(), request.POST.get("signature", "")
            )
        except SignInRefused as refusal:
            error = str(refusal)
        else:
            wanted = request.GET.get("next", "")
            # Only a path on this site: `?next=https://elsewhere` must not send a fresh sign-in away.
            if wanted and url_has_allowed_host_and_scheme(
                wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()
            ):
                return redirect(wanted)
            return redirect("motion-list")
    challenge = new_challenge(request.session)
    return render(
        request,
        "motion_runner/sign_in.html",
        {"challenge": challenge, "error": error, "namespace": "motion-runner"},
        status=403 if error else 200,
    )
