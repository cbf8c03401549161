from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import FilteredSelectMultiple
from django.contrib.auth import get_user_model
from django.db.models import Count, Q, Sum
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from motion_runner.admin import AgentAdmin, LedgerRecordAdmin, MotionAdmin, NoAddAdmin, ReadOnlyAdmin, dollars
from motion_runner.models import Agent, Motion, Scram
from motion_runner.runner.stopping import ScramHeld, lift_scram, raise_scram

from .models import Consideration, DialOverride, Dials, ListenState, MentionWake, ShadowDecision, Spend
from .web.api_steer import may_scram

UNITS = {"usd": "($)", "seconds": "(seconds)", "minutes": "(minutes)", "hours": "(hours)"}
WORDS = {"ttl": "shown for", "min": "minimum", "max": "maximum", "in": "input", "out": "output"}


def dial_label(name: str) -> str:
    """A dial's field name read aloud: `typing_ttl_seconds` → "Typing shown for (seconds)"."""
    words = name.split("_")
    unit = UNITS.get(words[-1])
    words = [WORDS.get(word, word) for word in (words[:-1] if unit else words)]
    return " ".join(words + ([unit] if unit else [])).capitalize()


class DialsForm(forms.ModelForm):
    # Picked from the people and agents there are (and any name already set), not typed as JSON.
    full_tools_for = forms.MultipleChoiceField(
        required=False,
        widget=FilteredSelectMultiple("names", is_stacked=False),
        label="Full tools for",
        help_text=Dials._meta.get_field("full_tools_for").help_text.split(", as a list")[0]
        + ". An agent's post counts only from a full-tools turn.",
    )

    class Meta:
        model = Dials
        fields = [f.name for f in Dials._meta.concrete_fields if f.editable and not f.primary_key]

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for name, field in self.fields.items():
            if name != "full_tools_for":
                field.label = dial_label(name)
        names = set(get_user_model().objects.values_list("username", flat=True))
        names |= set(Agent.objects.values_list("name", flat=True))
        names |= set(self.instance.full_tools_for or [])
        self.fields["full_tools_for"].choices = [(name, name) for name in sorted(names, key=str.lower)]
        self.initial["full_tools_for"] = list(self.instance.full_tools_for or [])


@admin.register(Dials)
class DialsAdmin(admin.ModelAdmin):
    """One row: the global defaults of every wake rule."""

    form = DialsForm

    def changelist_view(self, request, extra_context=None):
        """There is one Dials: its list is its page."""
        return redirect("admin:wakes_dials_change", Dials.load().pk)

    fieldsets = [
        (
            "The loop",
            {
                "fields": [
                    "tick_seconds",
                    "quiet_seconds",
                    "typing_ttl_seconds",
                    "idle_looks",
                    "rest_after_hours",
                    "look_batch",
                    "budget_retry_seconds",
                    "backfill_horizon_minutes",
                    "prompt_max_posts",
                ]
            },
        ),
        (
            "Mentions",
            {
                "fields": [
                    "terminal_mention_delay_seconds",
                    "mention_effort",
                    "mention_cap_usd",
                    "mention_wakes_per_hour",
                    "agent_chain_turns",
                    "mention_gather_seconds",
                ]
            },
        ),
        ("What a wake reads", {"fields": ["reads", "read_post_chars", "prompt_max_chars"]}),
        ("How long a turn works", {"fields": ["full_tools_silence_seconds", "full_tools_timeout_seconds"]}),
        (
            "Budgets and effort",
            {
                "fields": [
                    "considerations_per_hour",
                    "daily_budget_usd",
                    "consideration_cap_usd",
                    "min_consideration_usd",
                    "consider_effort",
                    "quiet_budget_share",
                ]
            },
        ),
        (
            "The screen",
            {
                "fields": [
                    "screen_enabled",
                    "screen_model",
                    "screen_system_prompt",
                    "screen_max_tokens",
                    "screen_timeout_seconds",
                    "screen_reserve_usd",
                    "screen_price_in",
                    "screen_price_out",
                    "screen_price_cache_write",
                    "screen_price_cache_read",
                ]
            },
        ),
        (
            "Wake modes and trust",
            {
                "fields": [
                    "full_tools_for",
                    "full_tools_after_look_only",
                    "look_only_footer",
                    "full_tools_footer",
                    "safety_lines",
                ]
            },
        ),
        (
            "The tool-loop guard",
            {
                "fields": [
                    "loop_same_call_in_a_row",
                    "loop_same_call_window",
                    "loop_same_call_in_window",
                    "loop_max_calls_per_turn",
                    "after_loop_note",
                ]
            },
        ),
        ("The scram (stop every agent)", {"fields": ["scram_for"]}),
        (
            "Arrivals, handoffs and first wakes",
            {
                "fields": [
                    "greet_gap_hours",
                    "arrival_ask",
                    "greeting_guidance",
                    "handoff_how",
                    "todo_list_line",
                    "first_session_letter",
                ]
            },
        ),
    ]

    def has_add_permission(self, request) -> bool:
        return not Dials.objects.exists()

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(DialOverride)
class DialOverrideAdmin(admin.ModelAdmin):
    list_display = [
        "pk",
        "motion",
        "agent",
        "considerations_per_hour",
        "daily_budget_usd",
        "consideration_cap_usd",
    ]


@admin.register(ListenState)
class ListenStateAdmin(NoAddAdmin):
    list_display = ["motion", "agent", "due_at", "last_post_at", "considered_through", "idle_level", "rested"]
    list_filter = ["rested"]


class DialOverrideInline(admin.StackedInline):
    model = DialOverride
    extra = 0
    verbose_name = "dial override"
    verbose_name_plural = "Dial overrides: a blank field inherits the global Dials"
    fields = [
        "quiet_seconds",
        "idle_looks",
        "considerations_per_hour",
        "daily_budget_usd",
        "consideration_cap_usd",
        "consider_effort",
        "mention_effort",
        "screen_enabled",
        "reads",
        "mention_wakes_per_hour",
        "agent_chain_turns",
    ]

    def get_formset(self, request, obj=None, **kwargs):
        formset = super().get_formset(request, obj, **kwargs)
        for field in formset.form.base_fields.values():
            field.help_text = ((field.help_text + " ") if field.help_text else "") + "Blank: inherits."
        return formset


class MotionOverrideInline(DialOverrideInline):
    """This Motion's own overrides (for every agent in it), or one pair's."""

    fk_name = "motion"
    fields = ["agent", *DialOverrideInline.fields]


class AgentOverrideInline(DialOverrideInline):
    """This agent's overrides in every Motion (the Motion left blank)."""

    fk_name = "agent"

    def get_queryset(self, request):
        return super().get_queryset(request).filter(motion__isnull=True)


admin.site.unregister(Motion)
admin.site.unregister(Agent)


@admin.register(Motion)
class MotionWithOverridesAdmin(MotionAdmin):
    inlines = [*MotionAdmin.inlines, MotionOverrideInline]


@admin.register(Agent)
class AgentWithOverridesAdmin(AgentAdmin):
    inlines = [*AgentAdmin.inlines, AgentOverrideInline]


@admin.register(Consideration)
class ConsiderationAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "motion", "agent", "kind", "status", "screen_verdict", "turn"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["turn", "state"]


@admin.register(MentionWake)
class MentionWakeAdmin(NoAddAdmin):
    list_display = ["created_at", "agent", "status", "due_at", "turn"]
    raw_id_fields = ["message", "turn"]


@admin.register(ShadowDecision)
class ShadowDecisionAdmin(ReadOnlyAdmin):
    """Shadow mode's decisions (WAKES_SHADOW): `manage.py shadow_report` lays them beside the poller's."""

    list_display = ["at", "motion", "agent", "kind", "verdict", "mode", "reason"]
    list_filter = ["verdict", "kind"]
    raw_id_fields = ["post"]


# Today's spend is one sum everywhere (the Motion list, these totals): every row of the day is
# spent; the rows `counted` are those the daily caps count (mentions, grants, manual wakes are not).
COUNTED = Sum("amount", filter=Q(counted=True))


@admin.register(Spend)
class SpendAdmin(LedgerRecordAdmin):
    """The ledger: each row in dollars with its turn, and the totals of what is shown by day and
    by Motion above the list."""

    change_list_template = "admin/wakes/spend/change_list.html"
    list_display = ["at", "kind", "motion", "agent", "cost", "state", "turn_link", "short_note"]
    list_filter = ["kind", "settled", "counted", "day", "motion"]
    raw_id_fields = ["turn", "consideration"]
    date_hierarchy = "day"

    @admin.display(description="amount", ordering="amount")
    def cost(self, row: Spend) -> str:
        return dollars(row.amount)

    @admin.display(description="state")
    def state(self, row: Spend) -> str:
        parts = ["settled" if row.settled else f"reserved {dollars(row.reserved)}"]
        if not row.counted:
            parts.append("not counted")
        return ", ".join(parts)

    @admin.display(description="turn")
    def turn_link(self, row: Spend) -> str:
        if not row.turn_id:
            return ""
        return format_html(
            '<a href="{}">#{}</a>',
            reverse("admin:motion_runner_turn_change", args=[row.turn_id]),
            row.turn_id,
        )

    @admin.display(description="note")
    def short_note(self, row: Spend) -> str:
        return row.note[:60] + ("…" if len(row.note) > 60 else "")

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            rows = changelist.queryset.order_by()
            response.context_data["totals_by_day"] = [
                {**row, "dollars": dollars(row["total"]), "counted_dollars": dollars(row["counted"] or 0)}
                for row in rows.values("day")
                .annotate(total=Sum("amount"), counted=COUNTED, entries=Count("pk"))
                .order_by("-day")[:14]
            ]
            response.context_data["totals_by_motion"] = [
                {**row, "dollars": dollars(row["total"]), "counted_dollars": dollars(row["counted"] or 0)}
                for row in rows.values("motion__slug", "motion__title")
                .annotate(total=Sum("amount"), counted=COUNTED, entries=Count("pk"))
                .order_by("-total")[:20]
            ]
        return response


@admin.register(Scram)
class ScramAdmin(admin.ModelAdmin):
    """The scram in the admin: adding one raises it (every agent stopped, posts answer 423,
    nothing wakes); the action lifts it. Staff and the people the scram_for dial names."""

    list_display = ["reason", "raised_by", "raised_at", "holds", "lifted_by", "lifted_at"]
    fields = ["reason"]
    actions = ["lift_the_scram"]

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a scram's record is kept as it was; lift it with the action

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    def has_add_permission(self, request) -> bool:
        return may_scram(request.user)

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_staff

    def save_model(self, request, obj, form, change) -> None:
        try:
            raised = raise_scram(request.user.get_username(), obj.reason[:2000])
        except ScramHeld as held:
            self.message_user(request, f"Not raised: {held}.", level=messages.ERROR)
            obj.pk = Scram.holding().pk
            return
        obj.pk = raised.pk

    @admin.action(description="Lift the scram")
    def lift_the_scram(self, request, queryset) -> None:
        if not may_scram(request.user):
            self.message_user(
                request, "Only staff and the people the scram_for dial name lift it.", messages.ERROR
            )
            return
        lifted = lift_scram(request.user.get_username())
        self.message_user(request, "The scram is lifted." if lifted else "No scram holds.")
