import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "motion_runner.settings")
application = get_wsgi_application()


def freeze_what_is_loaded() -> None:
    """The URLconf (and with it every view) loaded, then everything alive moved out of the cyclic
    collector's sight (gc.freeze): a request's own objects still are collected, but a full
    collection no longer walks the objects of Django and the apps on a request's time
    (bench/repost.py `--freeze`)."""
    get_resolver().url_patterns  # noqa: B018 - loaded for its side effect
    gc.collect()
    gc.freeze()


freeze_what_is_loaded()
