from django import forms
from django.contrib import admin

from .models import Agent, Message, Motion, MotionSession, SshKey, Turn


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "harness", "model", "binary", "listening"]
    list_filter = ["harness", "listening"]
    search_fields = ["name"]


@admin.register(Motion)
class MotionAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "workspace", "created_at"]
    search_fields = ["slug", "title"]
    filter_horizontal = ["agents"]


@admin.register(MotionSession)
class MotionSessionAdmin(admin.ModelAdmin):
    list_display = ["session_id", "motion", "agent", "harness", "last_used_at"]
    list_filter = ["harness"]
    search_fields = ["session_id"]


@admin.register(Message)
class MessageAdmin(admin.ModelAdmin):
    list_display = ["created_at", "motion", "sender", "source", "kind", "short_text"]
    list_filter = ["source", "kind"]
    search_fields = ["text", "id", "harness_message_id", "session_id"]
    raw_id_fields = ["turn", "author"]

    @admin.display(description="text")
    def short_text(self, message: Message) -> str:
        return message.text[:80]


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["pk", "motion", "agent", "reason", "mode", "status", "cost_usd", "queued_at"]
    list_filter = ["status", "mode", "reason"]
    raw_id_fields = ["woken_by"]
    readonly_fields = ["raw_log", "stderr_tail", "usage"]


class SshKeyForm(forms.ModelForm):
    class Meta:
        model = SshKey
        fields = ["user", "name", "public_key"]

    def clean_public_key(self) -> str:
        from .signin import fingerprint_of

        key = self.cleaned_data["public_key"].strip()
        self.instance.fingerprint = fingerprint_of(key)  # a ValidationError says what is wrong
        return key


@admin.register(SshKey)
class SshKeyAdmin(admin.ModelAdmin):
    form = SshKeyForm
    list_display = ["user", "name", "fingerprint", "last_used_at"]
    readonly_fields = ["fingerprint", "last_used_at"]
