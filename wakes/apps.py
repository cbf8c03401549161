from django.apps import AppConfig


class WakesConfig(AppConfig):
    name = "wakes"
    verbose_name = "Wakes"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from motion_runner.runner import turns

        from .compaction import compact_after_loop
        from .footer import finalize_prompt
        from .loop_guard import LoopGuard
        from .spend_guard import SpendGuard

        for monitor in (LoopGuard, SpendGuard):
            if monitor not in turns.monitor_factories:
                turns.monitor_factories.append(monitor)
        if finalize_prompt not in turns.prompt_finalizers:
            turns.prompt_finalizers.append(finalize_prompt)
        turns.turn_finished.connect(compact_after_loop, dispatch_uid="wakes.compact_after_loop")
        from .requests import record_requests

        turns.turn_finished.connect(record_requests, dispatch_uid="wakes.record_requests")
        from .abilities.runner import on_turn_finished

        turns.turn_finished.connect(on_turn_finished, dispatch_uid="wakes.abilities")

        from motion_runner.ingest import message_created
        from motion_runner.runner.turns import turn_finished

        from . import handlers, tasks  # noqa: F401  (registers the Celery tasks)

        message_created.connect(handlers.on_message_created, dispatch_uid="wakes.message_created")
        turn_finished.connect(handlers.on_turn_finished, dispatch_uid="wakes.turn_finished")
        turns.turn_retried.connect(handlers.on_turn_retried, dispatch_uid="wakes.turn_retried")
