from django.apps import AppConfig
from django.db import connections
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate
from django.utils.module_loading import import_string

from .sql.channels import TRIGGER, carrier
from .sql.message_search import ensure_sqlite_index
from .thread.socket_bell import install


class MotionRunnerConfig(AppConfig):
    name = "motion_runner"
    verbose_name = "Motion Runner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from . import checks, signals  # noqa: F401  (registers the system checks)
        from .runner import tasks  # noqa: F401  (registers the Celery tasks)

        user_logged_in.connect(remember_sign_in, dispatch_uid="motion_runner.remember_sign_in")
        connection_created.connect(ring_on_sqlite, dispatch_uid="motion_runner.ring_on_sqlite")
        post_migrate.connect(keep_sqlite_search_index, sender=self, dispatch_uid="motion_runner.sqlite_fts")
        # The write path writes what a binding hands over (a post made in the host), and the
        # runner stops what the host's page stops: the binding only sends the signals (the record
        # and memory_lane import nothing of the write path).
        from .ingest.writer import insert_one
        from .runner.stopping import scram_from_host, stop_for_host

        def write_host_post(sender, message, **kwargs) -> bool:
            return insert_one(message)

        def stop_from_host(sender, motion, agent_name: str, by: str, **kwargs) -> None:
            stop_for_host(motion, agent_name, by)

        signals.host_post_made.connect(write_host_post, weak=False, dispatch_uid="motion_runner.host_post")
        signals.host_stop_pressed.connect(stop_from_host, weak=False, dispatch_uid="motion_runner.host_stop")

        def scram_pressed_in_host(
            sender, holds: bool, by: str, reason: str = "", refused: str = "", ref: str = "", **kwargs
        ) -> None:
            scram_from_host(holds, by, reason, refused=refused, ref=ref)

        signals.host_scram_pressed.connect(
            scram_pressed_in_host, weak=False, dispatch_uid="motion_runner.host_scram"
        )
        # memory-lane's page took a post back: the apps' copy goes the same way (retract.py).
        from .retract import take_back_for_host

        def taken_back_in_host(sender, message_id, kind: str, text: str, by: str, **kwargs) -> None:
            take_back_for_host(message_id, kind, text, by)

        signals.host_post_taken_back.connect(
            taken_back_in_host, weak=False, dispatch_uid="motion_runner.host_taken_back"
        )
        # memory-lane's clients read every hold (wakes' and its runner's) through `GET …/held/`.
        from .memory_lane import pulse  # noqa: F401  (registers memory-lane's pulse task)
        from .memory_lane.held import keep_for_clients

        signals.hold_changed.connect(keep_for_clients, dispatch_uid="motion_runner.memory_lane.held")
        from .thread.holds_shown import keep_shown

        signals.hold_changed.connect(keep_shown, dispatch_uid="motion_runner.thread.holds")  # the thread's
        # The record binding's receivers (memory_lane: a post made in the host reaches the apps);
        # by path, as the models it loads are ready only now.
        import_string("motion_runner.record.binding")().connect()
        from .memory_lane.fence import poller_fenced_agents

        if poller_fenced_agents not in signals.fenced_agent_providers:  # wakes asks it (signals.py)
            signals.fenced_agent_providers.append(poller_fenced_agents)


def ring_on_sqlite(sender, connection, **kwargs) -> None:
    """SQLite has no NOTIFY: each connection rings the message bell itself (socket_bell.py)."""
    if carrier(connection) == TRIGGER:
        install(connection)


def keep_sqlite_search_index(sender, using: str = "default", **kwargs) -> None:
    """SQLite's FTS5 table and triggers put back after a migrate that may have remade the table."""
    ensure_sqlite_index(connections[using])


def remember_sign_in(sender, request, user, **kwargs) -> None:
    """Every sign-in says how it was made; only the SSH one sets "ssh" (motion_runner.people.signin)."""
    if request is not None and hasattr(request, "session"):
        request.session.setdefault("sign_in", "password")
