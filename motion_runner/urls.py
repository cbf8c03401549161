from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from . import views
from .api import views as api

urlpatterns = [
    path("", views.motion_list, name="motion-list"),
    path("motions/<slug:slug>/", views.motion_thread, name="motion-thread"),
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/motions/", api.MotionList.as_view(), name="api-motions"),
    path("api/motions/<slug:slug>/", api.MotionDetail.as_view(), name="api-motion"),
    path("api/motions/<slug:slug>/messages/", api.MessageList.as_view(), name="api-messages"),
    path("api/turns/", api.TurnList.as_view(), name="api-turns"),
    path("api/turns/<int:pk>/", api.TurnDetail.as_view(), name="api-turn"),
    path("", include("wakes.urls")),
]
