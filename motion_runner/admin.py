import json
import re

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.helpers import ActionForm
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html

from .api.auth import create_key
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
from .people.signin import fingerprint_of
from .transcripts.importer import assign_session

admin.site.site_header = "Motion Runner"
admin.site.site_title = "Motion Runner admin"
admin.site.index_title = "Motions, agents and their records"
admin.site.enable_nav_sidebar = False  # the ledger and turn lists need the width at 1280 px


class ReadOnlyAdmin(admin.ModelAdmin):
    """An audit record: written by the runner, read here, never made or edited by hand."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class NoAddAdmin(admin.ModelAdmin):
    """Rows the runner makes (sessions, transcript files, listen states): looked at and, where
    it helps, corrected here; never added by hand."""

    def has_add_permission(self, request) -> bool:
        return False


class LedgerRecordAdmin(ReadOnlyAdmin):
    """A money record (a turn, a ledger row): neither made, edited nor deleted by hand, so no
    "Delete selected" either: the ledger = turns = usage × price holds only if rows stay."""

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


def dollars(amount) -> str:
    return "" if amount is None else f"${amount:,.4f}" if abs(amount) < 1 else f"${amount:,.2f}"


# An env value under a name like these is a secret: the form shows it masked once saved.
SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASS|AUTH|CREDENTIAL", re.IGNORECASE)
MASK = "•••••••• (saved; type a new value to replace it)"


def masked(env: dict) -> dict:
    return {name: MASK if SECRET_NAME.search(name) and value else value for name, value in env.items()}


class AgentForm(forms.ModelForm):
    make_key = forms.BooleanField(
        required=False,
        label="Make a new API key",
        help_text="On save, a key for this agent is made and shown once, at the top of the page.",
    )

    class Meta:
        model = Agent
        fields = ["name", "harness", "binary", "workdir", "model", "system_prompt", "env", "listening"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "env" not in self.fields:  # a view-only user's form: the admin shows masked_env instead
            return
        if self.instance.pk and isinstance(self.instance.env, dict):
            self.initial["env"] = masked(self.instance.env)
        self.fields["env"].help_text = (
            "Extra environment variables, as JSON. Secrets (names with KEY, TOKEN, SECRET, PASSWORD) "
            "are never shown again once saved: leave the mask to keep one. Claude Code's key is ANTHROPIC_API_KEY."
        )

    def clean_env(self):
        env = self.cleaned_data.get("env") or {}
        if not isinstance(env, dict):
            raise forms.ValidationError(
                'A JSON object of names and values, e.g. {"ANTHROPIC_API_KEY": "sk-…"}.'
            )
        saved = self.instance.env if self.instance.pk and isinstance(self.instance.env, dict) else {}
        kept = {}
        for name, value in env.items():
            if value == MASK:
                if name not in saved:
                    raise forms.ValidationError(f"{name}: type its value (the mask only keeps a saved one).")
                value = saved[name]
            kept[name] = value
        return kept


class AgentKeyInline(admin.TabularInline):
    model = AgentKey
    extra = 0
    fields = ["prefix", "label", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    can_delete = False
    verbose_name_plural = (
        "API keys (make one with “Make a new API key” above; revoke one in the Agent keys list)"
    )

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    form = AgentForm
    list_display = ["name", "harness", "model", "binary", "listening", "key_count"]
    list_filter = ["harness", "listening"]
    search_fields = ["name"]
    actions = ["create_key"]
    inlines = [AgentKeyInline]

    def get_fields(self, request, obj=None):
        fields = super().get_fields(request, obj)
        if not self.has_change_permission(request, obj):
            # A view-only user reads every field as text: the env's secrets masked, as the form does.
            fields = ["masked_env" if name == "env" else name for name in fields if name != "make_key"]
        return fields

    @admin.display(description="env")
    def masked_env(self, agent: Agent) -> str:
        return json.dumps(masked(agent.env) if isinstance(agent.env, dict) else {}, indent=1)

    @admin.display(description="active keys")
    def key_count(self, agent: Agent) -> int:
        return agent.keys.filter(revoked_at__isnull=True).count()

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if form.cleaned_data.get("make_key"):
            self.create_key(request, Agent.objects.filter(pk=obj.pk))

    @admin.action(description="Create an API key (shown once)", permissions=["change"])
    def create_key(self, request, queryset):
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
        return False  # keys are made on the Agent page or by `manage.py agent_key`: shown once

    def add_view(self, request, form_url="", extra_context=None):
        self.message_user(request, "A key is made on its agent's page: tick “Make a new API key” and save.")
        return redirect("admin:motion_runner_agent_changelist")

    @admin.action(description="Revoke the selected keys", permissions=["change"])
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

    @admin.action(
        description="Assign to the Motion chosen below (claims and imports it)", permissions=["change"]
    )
    def assign(self, request, queryset):
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
class TranscriptFileAdmin(NoAddAdmin):
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
    list_display = ["slug", "title", "workspace", "created_at", "thread"]
    search_fields = ["slug", "title"]
    filter_horizontal = ["agents"]

    @admin.display(description="thread")
    def thread(self, motion: Motion) -> str:
        return format_html('<a href="{}">open</a>', motion.get_absolute_url())


@admin.register(MotionSession)
class MotionSessionAdmin(NoAddAdmin):
    list_display = ["session_id", "motion", "agent", "harness", "last_used_at"]
    list_filter = ["harness"]
    search_fields = ["session_id"]


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "motion", "sender", "source", "kind", "short_text"]
    list_filter = ["source", "kind"]
    search_fields = ["text", "id", "harness_message_id", "session_id"]
    raw_id_fields = ["turn", "author"]

    @admin.display(description="text")
    def short_text(self, message: Message) -> str:
        return message.text[:80]


@admin.register(Turn)
class TurnAdmin(LedgerRecordAdmin):
    list_display = ["pk", "motion", "agent", "reason", "mode", "status", "cost", "queued_at"]
    list_filter = ["status", "mode", "reason"]
    raw_id_fields = ["woken_by"]

    @admin.display(description="cost", ordering="cost_usd")
    def cost(self, turn: Turn) -> str:
        return dollars(turn.cost_usd)

    def view_on_site(self, turn: Turn) -> str:
        return reverse("motion-thread", args=[turn.motion_id])


class SshKeyForm(forms.ModelForm):
    class Meta:
        model = SshKey
        fields = ["user", "name", "public_key"]

    def clean_public_key(self) -> str:
        key = self.cleaned_data["public_key"].strip()
        self.instance.fingerprint = fingerprint_of(key)  # a ValidationError says what is wrong
        return key


@admin.register(SshKey)
class SshKeyAdmin(admin.ModelAdmin):
    form = SshKeyForm
    list_display = ["user", "name", "fingerprint", "last_used_at"]
    readonly_fields = ["fingerprint", "last_used_at"]
