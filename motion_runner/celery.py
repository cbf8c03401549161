import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "motion_runner.settings")

app = Celery("motion_runner")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
