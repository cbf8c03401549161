from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "tests.host.conversations"
    label = "conversations"  # memory-lane's label: the binding's default model labels name it
    default_auto_field = "django.db.models.BigAutoField"
