from django.urls import include, path

from . import views
from .api import AnswerRequest, HoldsView, TypingPingView
from .api_steer import ScramView, SteerView
from .api_timing import TimingView
from .preview import wake_preview

urlpatterns = [
    path("", views.motion_list, name="motion-list"),
    path("api/requests/<int:pk>/<str:action>/", AnswerRequest.as_view(), name="api-request-answer"),
    path("api/motions/<slug:slug>/typing/", TypingPingView.as_view(), name="api-typing"),
    path("api/motions/<slug:slug>/holds/", HoldsView.as_view(), name="api-holds"),
    path("api/motions/<slug:slug>/steer/", SteerView.as_view(), name="api-steer"),
    path("api/motions/<slug:slug>/timing/", TimingView.as_view(), name="api-timing"),
    path("api/scram/", ScramView.as_view(), name="api-scram"),
    path("scram/", views.scram_button, name="scram-button"),
    path("motions/<slug:slug>/wakes/", wake_preview, name="wake-preview"),
    path("", include("wakes.notices.urls")),
]
