from __future__ import annotations

from django.contrib.auth import authenticate, login
from django.contrib.auth.views import redirect_to_login
from django.core.cache import cache
from django.http import Http404
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from ..conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from ..people.access import readable_motion
from ..people.signin import NAMESPACE, SignInRefused, current_challenge, new_challenge, sign_in_with_ssh
from ..signals import thread_page_context


def motion_thread(request, slug: str):
    try:
        motion = readable_motion(request.user, slug)
    except Http404:
        # Signed out: to the sign-in page and back, whether or not the Motion exists (the same
        # answer for both, so a signed-out visitor learns no slugs). Signed in: a plain page,
        # never DEBUG's technical 404.
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path(), reverse("sign-in"))
        return render(request, "motion_runner/not_found.html", {"slug": slug}, status=404)
    context = {
        "motion": motion,
        "can_grant": False,
        "can_post": False,
        "steer_url": "",
        "wake_mode": "",
        "wake_rule": "",
        "agent_pages": {},
        "poll_wait": settings.THREAD_POLL_WAIT_SECONDS,
    }
    if request.user.is_staff:  # where to give an agent its key, for those who can
        context["agent_pages"] = {
            agent.name: reverse("admin:motion_runner_agent_change", args=[agent.pk])
            for agent in motion.agents.all()
        }
    if request.user.is_authenticated:
        for provide in thread_page_context:  # wakes/: who may grant, what a post would wake with
            context.update(provide(request, motion))
    return render(request, "motion_runner/thread.html", context)


def favicon(request):
    return redirect(static("motion_runner/favicon.svg"), permanent=True)


PASSWORD_REFUSED = "That username and password do not match an account that may sign in."


def sign_in(request):
    """The people's sign-in: a password (posts wake agents look-only) or a one-time challenge
    signed with an SSH key (full tools). Anyone may call it (it is how a person becomes someone);
    a visit gets a new challenge, a failed try keeps the username and the challenge so the
    person can try again without starting over."""
    error = ""
    username = ""
    if request.method == "POST":
        username = request.POST.get("username", "").strip()
        password = request.POST.get("password", "")
        try:
            if password:
                sign_in_with_password(request, username, password)
            else:
                sign_in_with_ssh(request, username, request.POST.get("signature", ""))
        except SignInRefused as refusal:
            error = str(refusal)
        else:
            return redirect(safe_next(request) or "motion-list")
    challenge = current_challenge(request.session) if error else new_challenge(request.session)
    return render(
        request,
        "motion_runner/sign_in.html",
        {"challenge": challenge, "error": error, "namespace": NAMESPACE, "username": username},
        status=403 if error else 200,
    )


PASSWORD_TRIES = 10  # failed tries for one username in PASSWORD_TRIES_SECONDS, then a pause
PASSWORD_TRIES_SECONDS = 300


def sign_in_with_password(request, username: str, password: str) -> None:
    """Any active person with a password (staff or not): the trust rules make their posts wake
    agents look-only (wakes/decision/trust.py reads `sign_in`). Guessing is slowed: after PASSWORD_TRIES
    failures for a username, it is refused for a while (counted in Django's cache: Redis in
    production, shared by the web processes). Each try is counted, atomically, before the slow
    hash is checked, so tries sent in parallel cannot all be checked before one is counted; a
    success clears the count."""
    tries_key = "motion-runner-sign-in-failures:" + username.lower()
    if counted_try(tries_key) > PASSWORD_TRIES:
        raise SignInRefused("Too many failed tries for this username: wait five minutes and try again.")
    user = authenticate(request, username=username, password=password)
    if user is None:
        raise SignInRefused(PASSWORD_REFUSED)
    cache.delete(tries_key)
    login(request, user)
    request.session["sign_in"] = "password"


def counted_try(key: str) -> int:
    """This try's number in the window: one atomic increment (Redis INCR; the local cache's lock),
    the window starting at the first try."""
    cache.add(key, 0, PASSWORD_TRIES_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between the add and the increment
        cache.add(key, 1, PASSWORD_TRIES_SECONDS)
        return 1


def safe_next(request) -> str:
    """Where to go after signing in: only a path on this site (never another host)."""
    target = request.GET.get("next", "")
    allowed = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if target and allowed else ""
