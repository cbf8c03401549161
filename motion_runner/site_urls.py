"""The standalone site's root urls: the apps' routes (motion_runner/urls.py) at the root, with
the admin and the API docs beside them. A host project keeps its own root urls instead."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("motion_runner.urls")),
]
