"""motion_runner/sql/message_search.py: the indexed search (PostgreSQL's tsvector over the GIN
index) finds what the ORM reference path beside it (every word, a case-insensitive substring)
finds, for whole words; and the planner takes the index for it."""

from __future__ import annotations

import pytest
from django.db import connection

from motion_runner.models import Message
from motion_runner.sql import message_search
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


@pytest.mark.parametrize("query", ["harbor", "gate dawn", "GATE", "lights boats", "absent", "the"])
def test_the_index_finds_what_the_orm_finds(query):
    harbor = MotionFactory(slug="harbor")
    for text in POSTS:
        MessageFactory(motion=harbor, text=text)
    messages = Message.objects.all()
    indexed = set(message_search.pg_matching(messages, query).values_list("id", flat=True))
    reference = set(message_search.orm_matching(messages, query).values_list("id", flat=True))
    if query == "the":  # a stop word: the index never finds it; the substring finds it anywhere
        assert indexed == set()
    else:
        assert indexed == reference


def test_the_planner_takes_the_text_index():
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")  # a tiny table: ask whether the index can serve
        plan = message_search.pg_matching(Message.objects.all(), "harbor").explain()
        cursor.execute("RESET enable_seqscan")
    assert message_search.TEXT_INDEX in plan


def test_the_author_filter_takes_the_trigram_index():
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        plan = message_search.by_sender(Message.objects.all(), "@magent").explain()
        cursor.execute("RESET enable_seqscan")
    assert message_search.SENDER_INDEX in plan
