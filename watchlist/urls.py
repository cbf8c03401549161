from django.urls import include, path
from rest_framework.routers import SimpleRouter

from .api import WatchViewSet

watch_router = SimpleRouter(trailing_slash=True)
watch_router.register("watches", WatchViewSet, basename="watch")

urlpatterns = [
    path("api/", include(watch_router.urls)),
]
