"""The standalone site's root urls: the apps' routes (motion_runner/urls.py) at the root, with
the admin and the API docs beside them. A host project keeps its own root urls instead."""

from django.contrib import admin
from django.contrib.admin.exceptions import NotRegistered
from django.urls import include, path
from django_celery_beat import models as beat
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

# Beat's schedule is the code's (motion_runner/celery.py), not a thing to edit by hand: its five
# models stay off the admin's index.
for _model in (
    beat.PeriodicTask,
    beat.IntervalSchedule,
    beat.CrontabSchedule,
    beat.SolarSchedule,
    beat.ClockedSchedule,
):
    try:
        admin.site.unregister(_model)
    except NotRegistered:
        pass

# An unmatched /api/ path answers in the API's JSON error body (a host may name the same view).
handler404 = "motion_runner.api.errors.not_found"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("motion_runner.urls")),
]
