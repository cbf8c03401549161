from django.apps import AppConfig


class WakesConfig(AppConfig):
    name = "wakes"
    verbose_name = "Wakes"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from motion_runner.ingest import message_created
        from motion_runner.runner.turns import turn_finished

        from . import handlers, tasks  # noqa: F401  (registers the Celery tasks)

        message_created.connect(handlers.on_message_created, dispatch_uid="wakes.message_created")
        turn_finished.connect(handlers.on_turn_finished, dispatch_uid="wakes.turn_finished")
