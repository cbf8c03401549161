"""A ListenState read from the database (`ListenState.from_db`, the look's every due pair) is the
instance Django's own `Model.from_db` builds: the same fields, a saved row's state, its relations
and deferred fields loaded on demand, and Django's path again while anyone listens to its init."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.models import Model
from django.db.models.signals import post_init
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from tests.factories import AgentFactory, MotionFactory
from wakes.consider_loop.loop import look
from wakes.models import ListenState

pytestmark = pytest.mark.django_db


@pytest.fixture
def due_pair():
    now = timezone.now()
    return ListenState.objects.create(
        motion=MotionFactory(slug="workroom"),
        agent=AgentFactory(name="magent"),
        created_at=now - timedelta(days=2),
        last_post_at=now - timedelta(seconds=30),
        considered_through=now - timedelta(hours=1),
        idle_level=2,
        due_at=now - timedelta(seconds=20),
        version=7,
    )


def djangos_own(row: ListenState) -> ListenState:
    names = [field.attname for field in ListenState._meta.concrete_fields]
    return Model.from_db.__func__(ListenState, "default", names, [getattr(row, name) for name in names])


def test_the_look_builds_the_row_django_would(due_pair):
    [looked] = look(timezone.now(), 200)
    theirs = djangos_own(looked)
    fields = [field.attname for field in ListenState._meta.concrete_fields]
    assert {name: looked.__dict__[name] for name in fields} == {
        name: theirs.__dict__[name] for name in fields
    }
    assert (looked._state.adding, looked._state.db) == (False, "default")
    assert looked == theirs and looked.pending and looked.version == 7


def test_its_relations_load_as_djangos_do(due_pair):
    [looked] = look(timezone.now(), 200)
    assert (looked.motion.slug, looked.agent.name) == ("workroom", "magent")


def test_a_partial_row_loads_its_deferred_fields_on_demand(due_pair):
    row = ListenState.objects.only("id", "version").get(pk=due_pair.pk)
    with CaptureQueriesContext(connection) as queries:
        assert row.idle_level == 2
    assert len(queries) == 1


def test_a_saved_row_writes_back_what_it_read(due_pair):
    [looked] = look(timezone.now(), 200)
    looked.version += 1
    looked.save()
    due_pair.refresh_from_db()
    assert (due_pair.version, due_pair.idle_level) == (8, 2)


def test_while_someone_listens_to_its_init_djangos_path_builds_it(due_pair):
    heard = []

    def listener(sender, instance, **kwargs):
        heard.append(instance.pk)

    post_init.connect(listener, sender=ListenState)
    try:
        [looked] = look(timezone.now(), 200)
    finally:
        post_init.disconnect(listener, sender=ListenState)
    assert heard == [looked.pk]


def inits_while_looking(monkeypatch) -> int:
    calls = []
    djangos_init = Model.__init__

    def counted(self, *args, **kwargs):
        calls.append(type(self))
        djangos_init(self, *args, **kwargs)

    monkeypatch.setattr(Model, "__init__", counted)
    look(timezone.now(), 200)
    return calls.count(ListenState)


def test_the_fast_build_skips_djangos_init(due_pair, monkeypatch):
    assert inits_while_looking(monkeypatch) == 0


def test_with_the_fast_paths_off_djangos_own_path_builds_it(due_pair, monkeypatch, settings):
    settings.MOTION_RUNNER_SQL_FAST_PATHS = False
    assert inits_while_looking(monkeypatch) == 1
