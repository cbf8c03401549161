"""The host project's root urls, shaped like memory-lane's: its own pages and API at the root, its
own admin, and the apps mounted under a prefix (README: Adding it to memory-lane)."""

import re
import textwrap
from pathlib import Path

from django.contrib import admin
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import include, path  # noqa: F401  include: the README's block, run below


def host_home(request):
    return render(request, "base.html")  # the host's own base.html: the apps must not shadow it


def host_mood_stream(request, slug):
    return HttpResponse("the host's own stream route")


urlpatterns = [
    path("", host_home, name="host-home"),
    path("api/moods/<slug:slug>/stream/", host_mood_stream, name="host-mood-stream"),
    path("admin/", admin.site.urls),
]

# The README's step 3, exactly as a host pastes it (its second Python block), so the two agree.
_section = (Path(__file__).resolve().parent.parent.parent / "README.md").read_text()
_blocks = re.findall(r"```python\n(.*?)```", _section.split("## Adding it to memory-lane", 1)[1], re.S)
exec(textwrap.dedent(_blocks[1]))  # noqa: S102
