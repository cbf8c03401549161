from django.urls import path

from .api import TypingPingView

urlpatterns = [
    path("api/motions/<slug:slug>/typing/", TypingPingView.as_view(), name="api-typing"),
]
