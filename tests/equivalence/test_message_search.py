"""motion_runner/sql/message_search.py on PostgreSQL: the stored vector (a generated column under
a GIN index) finds what the ORM reference path (every word, a case-insensitive substring) finds,
for whole words, and what the same vector computed from the text finds; the newest-first windows
answer as the whole search does; and the planner takes each index for its query."""

from __future__ import annotations

import pytest
from django.db import connection

from motion_runner.models import Message
from motion_runner.sql import message_search
from tests.equivalence.search_support import QUERIES, long_thread, windows_agree
from tests.factories import MessageFactory, MotionFactory

pytestmark = [
    pytest.mark.skipif(connection.vendor != "postgresql", reason="the GIN index is PostgreSQL's"),
    pytest.mark.django_db,
]

POSTS = [
    "The harbor gate opens at dawn",
    "gate code changed",
    "Nothing about it here",
    "HARBOR lights, harbor boats",
    "the dawn patrol met at the gate",
]


def posted() -> None:
    harbor = MotionFactory(slug="harbor")
    for text in POSTS:
        MessageFactory(motion=harbor, text=text)


@pytest.mark.parametrize("query", ["harbor", "gate dawn", "GATE", "lights boats", "absent", "the"])
def test_the_index_finds_what_the_orm_finds(query):
    posted()
    messages = Message.objects.all()
    indexed = set(message_search.pg_matching(messages, query).values_list("id", flat=True))
    reference = set(message_search.orm_matching(messages, query).values_list("id", flat=True))
    if query == "the":  # a stop word: the index never finds it; the substring finds it anywhere
        assert indexed == set()
    else:
        assert indexed == reference


@pytest.mark.parametrize("query", ["harbor", "gate dawn", "opens", "boat", "the"])
def test_the_stored_vector_is_the_computed_one(query):
    posted()
    messages = Message.objects.all()
    stored = set(message_search.pg_matching(messages, query).values_list("id", flat=True))
    computed = set(message_search.pg_expression_matching(messages, query).values_list("id", flat=True))
    assert stored == computed


def test_an_edited_text_is_found_by_its_new_words():
    posted()
    Message.objects.filter(text="gate code changed").update(text="the combination was reset")
    found = message_search.pg_matching(Message.objects.all(), "combination").values_list("text", flat=True)
    assert list(found) == ["the combination was reset"]
    assert not message_search.pg_matching(Message.objects.filter(text__contains="reset"), "code").exists()


@pytest.mark.parametrize("query", QUERIES)
def test_the_newest_windows_answer_as_the_whole_search(monkeypatch, query):
    long_thread()
    found, reference = windows_agree(monkeypatch, query)
    assert found == reference


def planned(queryset, *also_off: str) -> str:
    """The plan with the scans a tiny table would rather take turned off: can the index serve?"""
    off = ("enable_seqscan", *also_off)
    with connection.cursor() as cursor:
        for each in off:
            cursor.execute(f"SET {each} = off")
        plan = queryset.explain()
        for each in off:
            cursor.execute(f"RESET {each}")
    return plan


def test_the_planner_takes_the_text_index():
    # A GIN index serves bitmap scans only; with plain index scans off too, the newest-first btree
    # cannot stand in for it (it did, in one random order of the suite: the table's statistics
    # left by the tests before made a backward walk look cheaper).
    matching = message_search.pg_matching(Message.objects.all(), "harbor")
    assert message_search.TEXT_INDEX in planned(matching, "enable_indexscan")


def test_the_author_filter_takes_its_index():
    by_author = message_search.by_sender(Message.objects.all(), "@MAgent").order_by("-created_at")[:10]
    assert message_search.AUTHOR_INDEX in planned(by_author)


def test_a_window_is_cut_with_the_newest_index():
    cut = Message.objects.order_by(*message_search.NEWEST_FIRST).values_list("created_at")[1999:2000]
    assert message_search.NEWEST_INDEX in planned(cut, "enable_bitmapscan", "enable_sort")


def test_the_author_filter_is_the_whole_name_any_case():
    harbor = MotionFactory(slug="harbor")
    MessageFactory(motion=harbor, sender="magent", text="one")
    MessageFactory(motion=harbor, sender="MAgent2", text="two")
    found = message_search.by_sender(Message.objects.all(), "@MAGENT").values_list("text", flat=True)
    assert list(found) == ["one"]


def common_and_rare() -> None:
    """60 posts: "gate" in all, "dawn" in most, "harbor" and "lights" once each (in the same post),
    counted by ANALYZE."""
    harbor = MotionFactory(slug="harbor")
    for n in range(60):
        text = "gate" + (" dawn" if n % 4 else "") + (" harbor lights" if n == 7 else "")
        MessageFactory(motion=harbor, text=text)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE motion_runner_message")
    message_search._shares.clear()  # the statistics as they are now, not as a test before saw them


def test_the_index_is_asked_only_for_the_words_that_narrow_together():
    common_and_rare()
    # "harbor" and "lights" match a handful of rows together: "gate" and "dawn" are checked on them.
    assert message_search.narrowing(["gate", "harbor", "dawn", "lights"]) == ["harbor", "lights"]


def test_every_word_is_asked_while_the_rare_ones_alone_leave_many_rows():
    common_and_rare()
    assert message_search.narrowing(["gate", "harbor"]) == ["gate", "harbor"]
    assert message_search.narrowing(["gate", "dawn"]) == ["gate", "dawn"]


@pytest.mark.parametrize(
    "query", ["gate harbor lights", "harbor gate dawn lights", "gate", "dawn gate", "gate absent lights"]
)
def test_words_checked_on_the_rows_find_what_the_orm_finds(query):
    common_and_rare()
    messages = Message.objects.all()
    indexed = set(message_search.pg_matching(messages, query).values_list("id", flat=True))
    reference = set(message_search.orm_matching(messages, query).values_list("id", flat=True))
    assert indexed == reference
