"""The apps' routes, and nothing else: a host project mounts them under any prefix with
`path("<prefix>/", include("motion_runner.urls"))`. The standalone site's root (the admin and the
API docs beside these) is motion_runner/site_urls.py.

This is the apps' one mount point, so it names the apps above the runner, wakes and watchlist, by
their urls modules' dotted paths (Django's `include`), never by an import: the runner's code
imports neither (import-linter's contracts, pyproject.toml)."""

from django.contrib.auth.views import LogoutView
from django.urls import include, path
from django.views.generic import RedirectView

from .api import agent_views, search, stop, taking_back
from .api import views as api
from .memory_lane import routes as memory_lane
from .thread import views

urlpatterns = [
    # One level up from a thread (the address bin/serve prints) is the Motion list, not a 404.
    path("motions/", RedirectView.as_view(pattern_name="motion-list"), name="motion-list-up"),
    path("motions/<slug:slug>/", views.motion_thread, name="motion-thread"),
    path("sign-in/", views.sign_in, name="sign-in"),
    path("sign-out/", LogoutView.as_view(next_page="motion-list"), name="sign-out"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("api/motions/", api.MotionList.as_view(), name="api-motions"),
    path("api/motions/<slug:slug>/", api.MotionDetail.as_view(), name="api-motion"),
    path("api/motions/<slug:slug>/messages/", api.MessageList.as_view(), name="api-messages"),
    path("api/motions/<slug:slug>/stop/", stop.StopView.as_view(), name="api-stop"),
    path("api/motions/<slug:slug>/search/", search.SearchView.as_view(), name="api-search"),
    path("api/motions/<slug:slug>/stream/", agent_views.StreamView.as_view(), name="api-stream"),
    path("api/motions/<slug:slug>/quiet/", agent_views.QuietView.as_view(), name="api-quiet"),
    # memory-lane's client contract: its runner and its transcript watcher (docs/memory-lane.md).
    path("api/moods/<slug:slug>/stream/", memory_lane.MoodStreamView.as_view(), name="api-mood-stream"),
    path("api/moods/<slug:slug>/quiet/", memory_lane.MoodQuietView.as_view(), name="api-mood-quiet"),
    path("api/moods/<slug:slug>/held/", memory_lane.MoodHeldView.as_view(), name="api-mood-held"),
    path("api/ingest/", memory_lane.IngestView.as_view(), name="api-ingest"),
    path("api/hooks/claude-code/", agent_views.ClaudeCodeHookView.as_view(), name="api-hooks-claude-code"),
    path("api/messages/<uuid:pk>/", taking_back.MessageDetail.as_view(), name="api-message"),
    path("api/turns/", api.TurnList.as_view(), name="api-turns"),
    path("api/turns/<int:pk>/", api.TurnDetail.as_view(), name="api-turn"),
    # The Motion list, request answers and typing pings (wakes), the watches (watchlist).
    path("", include("wakes.web.urls")),
    path("", include("watchlist.urls")),
]
