from django.apps import AppConfig


class WakesConfig(AppConfig):
    name = "wakes"
    verbose_name = "Wakes"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported here, not at the top: these modules import the models, which are not loaded
        # when Django imports an AppConfig. The seams are the runner's catalogue (motion_runner.signals);
        # the two with one answer (a turn's tool policy and clocks) are named by a setting instead,
        # whose default names wakes' (motion_runner/conf.py), so nothing is registered for them here.

        from django.contrib.auth.signals import user_logged_in

        from motion_runner import signals

        from . import tasks  # noqa: F401  (registers the Celery tasks)
        from .abilities.runner import on_turn_finished
        from .consider_loop import arrivals, handlers
        from .consider_loop.chains import let_chains_go
        from .consider_loop.mention_turns import build_started_prompt
        from .decision.steering import let_go
        from .money.spend_guard import SpendGuard
        from .notices.answers import on_message_created as record_answers
        from .turn import handoff
        from .turn.compaction import compact_after_loop
        from .turn.footer import finalize_prompt
        from .turn.loop_guard import LoopGuard
        from .turn.requests import record_requests
        from .web.views import someone_else_typed, thread_page_context, thread_poll_fields

        for monitor in (LoopGuard, SpendGuard):
            if monitor not in signals.monitor_factories:
                signals.monitor_factories.append(monitor)
        if finalize_prompt not in signals.prompt_finalizers:
            signals.prompt_finalizers.append(finalize_prompt)
        for hook, provider in (
            (signals.thread_page_context, thread_page_context),
            (signals.thread_poll_fields, thread_poll_fields),
            (signals.thread_poll_news, someone_else_typed),
            (signals.prompt_builders, build_started_prompt),
        ):
            if provider not in hook:
                hook.append(provider)
        signals.turn_finished.connect(compact_after_loop, dispatch_uid="wakes.compact_after_loop")
        signals.turn_finished.connect(record_requests, dispatch_uid="wakes.record_requests")
        signals.turn_finished.connect(on_turn_finished, dispatch_uid="wakes.abilities")
        signals.message_created.connect(handlers.on_message_created, dispatch_uid="wakes.message_created")
        signals.message_created.connect(record_answers, dispatch_uid="wakes.notices")
        signals.message_created.connect(handoff.on_message_created, dispatch_uid="wakes.handoffs")
        signals.message_created.connect(arrivals.on_message_created, dispatch_uid="wakes.arrivals")
        user_logged_in.connect(arrivals.on_signed_in, dispatch_uid="wakes.arrivals.signed_in")
        signals.host_signed_in.connect(
            arrivals.on_host_signed_in, dispatch_uid="wakes.arrivals.host_signed_in"
        )
        signals.turn_finished.connect(handlers.on_turn_finished, dispatch_uid="wakes.turn_finished")
        signals.turn_retried.connect(handlers.on_turn_retried, dispatch_uid="wakes.turn_retried")
        signals.turns_stopped.connect(let_go, dispatch_uid="wakes.let_go")
        signals.host_steering_changed.connect(
            handlers.on_host_steering_changed, dispatch_uid="wakes.host_steering_changed"
        )
        signals.turns_stopped.connect(let_chains_go, dispatch_uid="wakes.let_chains_go")
        signals.turn_repriced.connect(handlers.on_turn_repriced, dispatch_uid="wakes.turn_repriced")
