from __future__ import annotations

from django.shortcuts import get_object_or_404, render

from .models import Motion


def motion_list(request):
    return render(request, "motion_runner/motion_list.html", {"motions": Motion.objects.all()})


def motion_thread(request, slug: str):
    motion = get_object_or_404(Motion, slug=slug)
    return render(request, "motion_runner/thread.html", {"motion": motion})
