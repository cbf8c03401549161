from django.urls import path

from . import views
from .api import AnswerRequest, HoldsView, TypingPingView

urlpatterns = [
    path("", views.motion_list, name="motion-list"),
    path("api/requests/<int:pk>/<str:action>/", AnswerRequest.as_view(), name="api-request-answer"),
    path("api/motions/<slug:slug>/typing/", TypingPingView.as_view(), name="api-typing"),
    path("api/motions/<slug:slug>/holds/", HoldsView.as_view(), name="api-holds"),
]
