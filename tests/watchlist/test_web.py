"""Web pages: conditional GETs, else a hash of the main text (so ads and clocks are not changes)."""

from __future__ import annotations

import pytest

from watchlist.checker import run_cycle
from watchlist.kinds import web_page
from watchlist.kinds.web_page import main_text

from .conftest import lines, recheck

pytestmark = pytest.mark.django_db

STORY = "The merch table opens at noon.\n\nShirts come in S, M and L."


def test_a_page_with_an_etag_is_asked_with_if_none_match_and_a_304_ends_it(web, watch, merch):
    url = web.page("/news", "News", STORY, validator="etag")
    watch("web_page", url)
    run_cycle()

    recheck()

    last = web.requests[-1]
    assert last.header("if-none-match") and last.header("if-none-match").startswith('"')
    assert lines(merch) == []


def test_a_page_with_only_last_modified_is_asked_with_the_servers_own_date(web, watch, merch):
    url = web.page("/news", "News", STORY, validator="last_modified")
    watch("web_page", url)
    run_cycle()

    recheck()

    assert web.requests[-1].header("if-modified-since") == "Tue, 14 Nov 2023 22:13:20 GMT"
    assert web.requests[-1].header("if-none-match") is None
    assert lines(merch) == []


def test_a_page_with_neither_is_compared_by_its_main_text(web, watch, merch):
    url = web.page("/news", "News", STORY, validator="none")
    watch("web_page", url)
    run_cycle()
    recheck()
    assert lines(merch) == []

    web.change("/news", STORY.replace("S, M and L", "S, M, L and XL"))
    recheck()

    assert lines(merch) == [f"🌐 {url} changed: Shirts come in S, M, L and XL. {url}"]


def test_ads_and_a_clock_that_change_on_every_load_are_not_a_change(web, watch, merch):
    url = web.page("/shop", "Shop", STORY, validator="etag", dynamic=True)
    watch("web_page", url)
    run_cycle()
    recheck()
    recheck()
    assert lines(merch) == []

    web.change("/shop", STORY + "\n\nHoodies are sold out.")
    recheck()

    assert len(lines(merch)) == 1 and "Hoodies are sold out." in lines(merch)[0]


def test_the_main_text_leaves_out_the_ads_and_the_clock(web):
    from tests.fakes.web import WebPage

    page = WebPage("Shop", STORY, dynamic=True)
    first, second = (main_text(web.render(page).decode()) for _ in range(2))

    assert first == second
    assert "Widget" not in first and "generated at" not in first and "noon" in first


def test_editing_the_url_forgets_the_etag(web, watch, merch):
    url = web.page("/news", "News", STORY, validator="etag")
    page = watch("web_page", url)
    run_cycle()
    page.refresh_from_db()
    assert page.etag

    page.target = web.page("/other", "Other", "Something else entirely.", validator="etag")
    page.save()
    run_cycle()

    page.refresh_from_db()
    assert web.requests[-1].path == "/other" and web.requests[-1].header("if-none-match") is None
    assert lines(merch) == []


def test_a_page_that_is_gone_disables_the_watch(web, watch, merch):
    page = watch("web_page", web.url + "/nowhere")

    run_cycle()

    page.refresh_from_db()
    assert not page.enabled and page.disabled_reason.endswith("answered 404")
    assert lines(merch)[0].startswith("⛔ watch Web page:")


def test_a_page_without_validators_that_sends_the_same_bytes_is_not_extracted_again(
    web, watch, merch, monkeypatch
):
    url = web.page("/news", "News", STORY, validator="none")
    watch("web_page", url)
    run_cycle()
    extracted = []
    real = web_page.main_text
    monkeypatch.setattr(web_page, "main_text", lambda html: extracted.append(html) or real(html))

    recheck()
    web.change("/news", "The merch table opens at one.\n\nShirts come in S, M and L.")
    recheck()

    assert len(extracted) == 1  # only the changed page
    (line,) = lines(merch)
    assert "changed: The merch table opens at one." in line
