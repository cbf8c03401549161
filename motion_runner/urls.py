from django.contrib import admin
from django.contrib.auth.views import LogoutView
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from wakes import api as wakes_api
from watchlist.api import WatchViewSet

from . import views
from .api import agent_views
from .api import views as api

watch_router = SimpleRouter(trailing_slash=True)
watch_router.register("watches", WatchViewSet, basename="watch")

urlpatterns = [
    path("", views.motion_list, name="motion-list"),
    path("motions/<slug:slug>/", views.motion_thread, name="motion-thread"),
    path("sign-in/", views.sign_in, name="sign-in"),
    path("sign-out/", LogoutView.as_view(next_page="motion-list"), name="sign-out"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/motions/", api.MotionList.as_view(), name="api-motions"),
    path("api/motions/<slug:slug>/", api.MotionDetail.as_view(), name="api-motion"),
    path("api/motions/<slug:slug>/messages/", api.MessageList.as_view(), name="api-messages"),
    path("api/motions/<slug:slug>/stream/", agent_views.StreamView.as_view(), name="api-stream"),
    path("api/motions/<slug:slug>/quiet/", agent_views.QuietView.as_view(), name="api-quiet"),
    path("api/hooks/claude-code/", agent_views.ClaudeCodeHookView.as_view(), name="api-hooks-claude-code"),
    path("api/turns/", api.TurnList.as_view(), name="api-turns"),
    path("api/turns/<int:pk>/", api.TurnDetail.as_view(), name="api-turn"),
    path("api/requests/<int:pk>/<str:action>/", wakes_api.AnswerRequest.as_view(), name="api-request-answer"),
    path("api/", include(watch_router.urls)),
    path("", include("wakes.urls")),
]
