"""ListenState's own from_db (the look's rows straight into __dict__) loads what Django's loader
loads, and leaves deferred rows, listeners and saves to Django."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import models
from django.db.models.signals import post_init
from django.utils import timezone

from tests.factories import AgentFactory, MotionFactory
from wakes.loop import look
from wakes.models import ListenState

pytestmark = pytest.mark.django_db


def stock(instance: ListenState) -> ListenState:
    """The same row read through Django's own Model.from_db."""
    row = ListenState.objects.filter(pk=instance.pk).values_list(
        *[f.attname for f in ListenState._meta.concrete_fields]
    )
    return models.Model.from_db.__func__(ListenState, "default", None, row.get())


def field_values(instance: ListenState) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in ListenState._meta.concrete_fields}


@pytest.fixture
def due_state(db) -> ListenState:
    now = timezone.now()
    return ListenState.objects.create(
        motion=MotionFactory(),
        agent=AgentFactory(),
        created_at=now - timedelta(days=3),
        last_post_at=now - timedelta(seconds=30),
        considered_through=None,
        busy_until=None,
        due_at=now - timedelta(seconds=20),
        version=4,
    )


def test_a_looked_at_row_equals_djangos_own_and_is_not_new(due_state):
    [loaded] = look(timezone.now(), 10)
    theirs = stock(due_state)
    assert field_values(loaded) == field_values(theirs)
    assert (loaded._state.adding, loaded._state.db) == (False, "default")
    assert loaded.motion == due_state.motion and loaded.agent.name == due_state.agent.name
    assert loaded.pending is True


def test_a_loaded_row_saves_and_refreshes_as_usual(due_state):
    loaded = ListenState.objects.get(pk=due_state.pk)
    loaded.version = 5
    loaded.save(update_fields=["version"])
    loaded.refresh_from_db()
    assert loaded.version == 5 and ListenState.objects.get(pk=due_state.pk).version == 5


def test_a_row_with_deferred_fields_takes_djangos_way(due_state):
    loaded = ListenState.objects.only("id", "version").get(pk=due_state.pk)
    assert loaded.get_deferred_fields() >= {"due_at", "last_post_at"}
    assert loaded.due_at == due_state.due_at  # fetched when asked


def test_a_post_init_listener_still_hears_each_loaded_row(due_state):
    heard = []

    def listener(sender, instance, **kwargs):
        heard.append(instance)

    post_init.connect(listener, sender=ListenState)
    try:
        [loaded] = look(timezone.now(), 10)
    finally:
        post_init.disconnect(listener, sender=ListenState)
    assert heard == [loaded]
