from django.urls import path

from .api import NoticeList, NoticesSeen, PushSubscriptionView

urlpatterns = [
    path("api/notices/", NoticeList.as_view(), name="api-notices"),
    path("api/notices/seen/", NoticesSeen.as_view(), name="api-notices-seen"),
    path("api/notices/push/", PushSubscriptionView.as_view(), name="api-notices-push"),
]
