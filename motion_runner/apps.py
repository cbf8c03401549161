from django.apps import AppConfig
from django.db.backends.signals import connection_created
from django.utils.module_loading import import_string

from .sql.channels import TRIGGER, carrier
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
        # The write path writes what a binding hands over (a post made in the host): the record
        # package never imports it (pyproject.toml's contract "record-below-the-write-path").
        from .ingest.writer import insert_one

        if insert_one not in signals.host_post_writers:
            signals.host_post_writers.append(insert_one)
        from .runner.stopping import stop_for_host

        if stop_for_host not in signals.host_stop_handlers:
            signals.host_stop_handlers.append(stop_for_host)
        # The record binding's receivers (memory_lane: a post made in the host reaches the apps);
        # by path, as the models it loads are ready only now.
        import_string("motion_runner.record.binding")().connect()
        fence = import_string("motion_runner.record.poller_fenced_agents")
        if fence not in signals.fenced_agent_providers:  # wakes asks it (signals.py)
            signals.fenced_agent_providers.append(fence)


def ring_on_sqlite(sender, connection, **kwargs) -> None:
    """SQLite has no NOTIFY: each connection rings the message bell itself (socket_bell.py)."""
    if carrier(connection) == TRIGGER:
        install(connection)


def remember_sign_in(sender, request, user, **kwargs) -> None:
    """Every sign-in says how it was made; only the SSH one sets "ssh" (motion_runner.people.signin)."""
    if request is not None and hasattr(request, "session"):
        request.session.setdefault("sign_in", "password")
