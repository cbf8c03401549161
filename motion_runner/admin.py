from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.utils import timezone

from .models import (
    Agent,
    AgentKey,
    Message,
    Motion,
    MotionSession,
    SshKey,
    TranscriptFile,
    Turn,
    UnclaimedSession,
)


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "harness", "model", "binary", "listening"]
    list_filter = ["harness", "listening"]
    search_fields = ["name"]
    actions = ["create_key"]

    @admin.action(description="Create an API key (shown once)")
    def create_key(self, request, queryset):
        from .api.auth import create_key

        for agent in queryset:
            record, key = create_key(agent, label=f"made in the admin by {request.user.get_username()}")
            self.message_user(
                request,
                f"New key for @{agent.name} (prefix {record.prefix}); copy it now, it is not shown again: {key}",
                messages.WARNING,
            )


@admin.register(AgentKey)
class AgentKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "agent", "label", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["agent"]
    readonly_fields = ["prefix", "agent", "created_at", "last_used_at", "revoked_at"]
    fields = ["prefix", "agent", "label", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request) -> bool:
        return False  # keys are made by the Agent action or `manage.py agent_key`: shown once

    @admin.action(description="Revoke the selected keys")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        self.message_user(request, f"Revoked {count} key(s).")


class AssignForm(ActionForm):
    motion = forms.ModelChoiceField(Motion.objects.all(), required=False)
    agent = forms.ModelChoiceField(Agent.objects.all(), required=False, help_text="Who spoke in it.")


@admin.register(UnclaimedSession)
class UnclaimedSessionAdmin(admin.ModelAdmin):
    """The inbox: sessions no Motion claimed. Nothing is routed by guessing; a person decides."""

    list_display = ["session_id", "cwd", "agent", "short_first_lines", "last_seen_at"]
    readonly_fields = [
        "session_id",
        "harness",
        "path",
        "cwd",
        "first_lines",
        "agent",
        "first_seen_at",
        "last_seen_at",
    ]
    action_form = AssignForm
    actions = ["assign"]

    def has_add_permission(self, request) -> bool:
        return False

    @admin.display(description="first lines")
    def short_first_lines(self, inbox: UnclaimedSession) -> str:
        return inbox.first_lines[:160]

    @admin.action(description="Assign to the Motion chosen below (claims and imports it)")
    def assign(self, request, queryset):
        from .transcripts import assign_session

        motion_id = request.POST.get("motion")
        motion = Motion.objects.filter(pk=motion_id).first() if motion_id else None
        if motion is None:
            self.message_user(request, "Choose a Motion first.", messages.ERROR)
            return
        agent_id = request.POST.get("agent")
        agent = Agent.objects.filter(pk=agent_id).first() if agent_id else None
        for inbox in queryset:
            result = assign_session(inbox, motion, agent)
            imported = result.imported if result else 0
            self.message_user(request, f"{inbox.session_id} → {motion.slug}: {imported} message(s) imported.")


@admin.register(TranscriptFile)
class TranscriptFileAdmin(admin.ModelAdmin):
    list_display = [
        "path",
        "session_id",
        "offset",
        "size",
        "lines",
        "unknown_lines",
        "bad_lines",
        "missing_since",
    ]
    search_fields = ["path", "session_id"]
    readonly_fields = [f.name for f in TranscriptFile._meta.fields]


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
