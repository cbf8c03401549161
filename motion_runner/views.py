from __future__ import annotations

from django.conf import settings
from django.shortcuts import get_object_or_404, redirect, render
from django.templatetags.static import static
from django.urls import reverse

from wakes.overview import motion_cards
from wakes.requests import person_may_grant
from wakes.trust import decide

from .context import sign_in_of
from .models import Message, Motion


def motion_list(request):
    motions = list(Motion.objects.prefetch_related("agents"))
    return render(request, "motion_runner/motion_list.html", {"cards": motion_cards(motions)})


def what_your_posts_wake(request) -> tuple[str, str]:
    """The mode a post by this reader would wake an agent with, and the rule that says so."""
    post = Message(
        source="web", author=request.user, sender=request.user.get_username(), sign_in=sign_in_of(request)
    )
    decision = decide(post)
    return decision.mode, decision.rule


def motion_thread(request, slug: str):
    motion = get_object_or_404(Motion, slug=slug)
    context = {
        "motion": motion,
        "can_grant": False,
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
        context["can_grant"], _ = person_may_grant(request.user, sign_in_of(request))
        context["wake_mode"], context["wake_rule"] = what_your_posts_wake(request)
    return render(request, "motion_runner/thread.html", context)


def favicon(request):
    return redirect(static("motion_runner/favicon.svg"), permanent=True)


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
            return redirect(request.GET.get("next") or "motion-list")
    challenge = new_challenge(request.session)
    return render(
        request,
        "motion_runner/sign_in.html",
        {"challenge": challenge, "error": error, "namespace": "motion-runner"},
        status=403 if error else 200,
    )
