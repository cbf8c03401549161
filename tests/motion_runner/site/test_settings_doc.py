"""docs/settings.md names every setting and every dial (issue 43 item 8): each app's conf.py
defaults, each environment variable the standalone settings read, each field of `Dials`."""

from __future__ import annotations

import re

import pytest

from motion_runner import conf as runner_conf
from tests.paths import ROOT
from wakes import conf as wakes_conf
from wakes.models import Dials
from watchlist import conf as watchlist_conf

ENV_READ = re.compile(
    r"(?:environ\.get|environ\[|getenv|env_bool|env_int|env_float|env_list)\(\s*[\"']([A-Z0-9_]+)[\"']"
)


def documented() -> set[str]:
    return set(re.findall(r"`([A-Za-z0-9_]+)`", (ROOT / "docs" / "settings.md").read_text()))


def environment_reads() -> set[str]:
    return set(ENV_READ.findall((ROOT / "motion_runner" / "settings.py").read_text()))


def dial_fields() -> set[str]:
    return {f.name for f in Dials._meta.get_fields() if f.concrete and not f.auto_created}


@pytest.mark.parametrize(
    "names",
    [
        pytest.param(lambda: set(runner_conf.DEFAULTS), id="motion_runner/conf.py"),
        pytest.param(lambda: set(wakes_conf.DEFAULTS), id="wakes/conf.py"),
        pytest.param(lambda: set(watchlist_conf.DEFAULTS), id="watchlist/conf.py"),
        pytest.param(environment_reads, id="settings.py's environment"),
        pytest.param(dial_fields, id="Dials"),
    ],
)
def test_every_name_is_on_the_page(names):
    assert names() - documented() == set()


def test_the_environment_reads_are_found():
    # The pattern above must keep finding what settings.py reads, or the check above checks nothing.
    assert {"DATABASE_URL", "SECRET_KEY", "CELERY_BROKER_URL"} <= environment_reads()


def test_the_readme_points_to_the_page():
    assert "docs/settings.md" in (ROOT / "README.md").read_text()
