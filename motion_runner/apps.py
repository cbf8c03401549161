from django.apps import AppConfig


class MotionRunnerConfig(AppConfig):
    name = "motion_runner"
    verbose_name = "Motion Runner"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the system checks)
        from .runner import tasks  # noqa: F401  (registers the Celery tasks)
