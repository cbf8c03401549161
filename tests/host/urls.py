"""The host project's root urls, shaped like memory-lane's: its own pages and API at the root, its
own admin, and the apps mounted under a prefix (README: Adding it to memory-lane)."""

from django.contrib import admin
from django.http import HttpResponse
from django.shortcuts import render
from django.urls import include, path


def host_home(request):
    return render(request, "base.html")  # the host's own base.html: the apps must not shadow it


def host_mood_stream(request, slug):
    return HttpResponse("the host's own stream route")


urlpatterns = [
    path("", host_home, name="host-home"),
    path("api/moods/<slug:slug>/stream/", host_mood_stream, name="host-mood-stream"),
    path("admin/", admin.site.urls),
    path("runner/", include("motion_runner.urls")),
]
