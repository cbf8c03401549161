"""Real headless Chromium (Debian's `chromium`), driven by Playwright for Python.

Playwright never downloads a browser here: it drives the system executable. In CI a missing
Chromium fails the run (bin/setup installs it); elsewhere the browser tests are skipped, saying why.
Screenshots go to var/screenshots/ (kept as CI artifacts).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

# Playwright's sync API runs an event loop in this thread; the test's own ORM calls are still
# plain synchronous code, so Django's async guard would refuse them for no reason.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_FLAGS = [
    "--no-sandbox",  # CI runs as root
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",  # this machine's closed network refuses Google's hosts
    "--disable-component-update",
    "--disable-sync",
]
VIEWPORTS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


def chromium_executable() -> str:
    found = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(found).is_file():
        reason = "Debian's chromium is not installed (bin/setup installs it when run as root)"
        if settings.REQUIRE_REAL_SERVICES or os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def chromium() -> Iterator:
    executable = chromium_executable()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(params=list(VIEWPORTS))
def viewport(request) -> dict:
    """Runs the test at 1280 px and at 390 px."""
    return VIEWPORTS[request.param]


@pytest.fixture
def page(chromium, request):
    """A fresh browser context (no cookies) with one page; the viewport is 1280 px unless the
    test also asks for `viewport`. A failing test leaves a screenshot in var/screenshots/."""
    size = request.getfixturevalue("viewport") if "viewport" in request.fixturenames else VIEWPORTS["desktop"]
    context = chromium.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.js_errors = errors
    yield page
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        screenshot(page, request.node.name + "-failed")
    context.close()
    requests_settled()


def requests_settled(bound: float = 60) -> None:
    """Wait until no request the page started is still inside the database: a closed page's last
    request may still be running on the live server, and the flush after the test (a TRUNCATE)
    deadlocked with it on a loaded machine. An event, with a generous bound, not a sleep."""
    if connection.vendor != "postgresql":
        return  # SQLite's live server shares one file lock: a flush waits for it by itself
    deadline = time.monotonic() + bound
    with connection.cursor() as cursor:
        while time.monotonic() < deadline:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND state NOT IN ('idle') AND backend_type = 'client backend'"
            )
            if cursor.fetchone()[0] == 0:
                return
            time.sleep(0.05)


def screenshot(page, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def screenshot_of(locator, name: str) -> Path:
    """Just one part of the page (the README's pictures are of the thread, not the margins)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    locator.screenshot(path=str(path))
    return path


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report


def sign_in_as(page, live_server, user, sign_in: str = "password") -> None:
    """Gives the browser a session for `user`, as if they had signed in with `sign_in` ("ssh",
    "wiki", "password"; the sign-in form itself has its own browser test)."""
    from django.conf import settings as django_settings
    from django.test import Client

    client = Client()
    client.force_login(user)
    session = client.session
    session["sign_in"] = sign_in
    session.save()
    cookie = client.cookies[django_settings.SESSION_COOKIE_NAME]
    page.context.add_cookies(
        [{"name": cookie.key, "value": cookie.value, "url": live_server.url, "httpOnly": True}]
    )


def sign_in_via_form(page, username: str, password: str) -> None:
    """Signs in on the people's sign-in page the page is on, with a password."""
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
