from django.apps import AppConfig


class WatchlistConfig(AppConfig):
    name = "watchlist"
    default_auto_field = "django.db.models.BigAutoField"
