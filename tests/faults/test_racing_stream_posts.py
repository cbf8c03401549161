"""Twenty clients post overlapping batches of the same harness events, each in its own random
order, at once: every request answers 200 and every event is stored exactly once.

The events are the lines recorded from the real Claude Code CLI (read-then-reply), replicated
with fresh ids the way bench/ingest.py does.
"""

from __future__ import annotations

import random
import threading
import uuid

import pytest
from django.db import connection
from django.test import Client

from motion_runner.api.auth import create_key
from motion_runner.models import Message
from tests.factories import AgentFactory, MotionFactory
from tests.recorded import fresh_stream_events

CLIENTS = 20
POSTS_PER_CLIENT = 4
BATCH = 60


@pytest.mark.django_db(transaction=True)
def test_twenty_clients_posting_overlapping_batches_in_random_orders_store_each_event_once():
    motion = MotionFactory(slug="harbor")
    scribe = AgentFactory(name="scribe")
    motion.agents.add(scribe)
    key = create_key(scribe)[1]
    session_id = str(uuid.uuid4())
    events = fresh_stream_events(120, session_id)
    expected_ids = {line["uuid"] for line in events if line.get("type") in ("assistant", "user")}
    statuses: list[int] = []
    start = threading.Barrier(CLIENTS)

    def client_posts(seed: int) -> None:
        shuffle = random.Random(seed)
        client = Client(raise_request_exception=False)
        try:
            start.wait()
            for _ in range(POSTS_PER_CLIENT):
                batch = shuffle.sample(events, BATCH)  # overlapping, in this client's own order
                response = client.post(
                    "/api/motions/harbor/stream/",
                    {"harness": "claude-code", "session_id": session_id, "events": batch},
                    content_type="application/json",
                    HTTP_AUTHORIZATION=f"Bearer {key}",
                )
                statuses.append(response.status_code)
            # Everything, once more, so each event was surely sent by someone.
            client.post(
                "/api/motions/harbor/stream/",
                {"harness": "claude-code", "session_id": session_id, "events": events},
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {key}",
            )
        finally:
            connection.close()

    threads = [threading.Thread(target=client_posts, args=(seed,)) for seed in range(CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)

    assert len(statuses) == CLIENTS * POSTS_PER_CLIENT
    assert [code for code in statuses if code != 200] == []
    stored = Message.objects.filter(motion=motion, session_id=session_id)
    stored_ids = [str(pk) for pk in stored.values_list("id", flat=True)]
    assert len(stored_ids) == len(set(stored_ids))
    assert expected_ids <= set(stored_ids)
