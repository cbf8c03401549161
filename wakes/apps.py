from django.apps import AppConfig


class WakesConfig(AppConfig):
    name = "wakes"
    default_auto_field = "django.db.models.BigAutoField"
