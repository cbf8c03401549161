"""The settings mechanism the apps' conf.py modules build on (see motion_runner/conf.py for the
why): a name looked up on `django.conf.settings` at every read, else the default given here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings


class AppSettings:
    """One app's settings: `app_settings.NAME` is `settings.NAME` if set, else the app's default."""

    def __init__(self, app: str, defaults: Mapping[str, Any]):
        self._app = app
        self._defaults = dict(defaults)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(settings, name) or name not in self._defaults:
            # Django's own settings (DEBUG, …) read through as they are: a module reads all of
            # its settings through this one object.
            return getattr(settings, name)
        default = self._defaults[name]
        return default() if callable(default) else default

    def names(self) -> list[str]:
        return sorted(self._defaults)

    def default(self, name: str) -> Any:
        value = self._defaults[name]
        return value() if callable(value) else value
