"""The beat task: every 90 s, one cycle over whatever is due."""

from __future__ import annotations

import pytest
from django.conf import settings

from motion_runner.celery import app
from watchlist.models import Watch
from watchlist.tasks import check_watches

pytestmark = pytest.mark.django_db


def test_beat_runs_the_check_every_90_seconds():
    entry = settings.CELERY_BEAT_SCHEDULE["check-watches"]
    assert entry == {"task": "watchlist.check_watches", "schedule": 90.0}
    assert "watchlist.check_watches" in app.tasks


def test_the_task_checks_what_is_due_and_reports_counts(web, watch):
    page = watch("web_page", web.page("/news", "News", "Shirts are coming."))

    result = check_watches()

    page.refresh_from_db()
    assert result["claimed"] == 1 and result["checked"] == 1
    assert page.text_hash and Watch.objects.get(pk=page.pk).claim == ""
