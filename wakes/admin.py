from django.contrib import admin

from .models import Consideration, DialOverride, Dials, ListenState, MentionWake, Spend


@admin.register(Dials)
class DialsAdmin(admin.ModelAdmin):
    """One row: the global defaults of every wake rule."""

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
        ("Mentions", {"fields": ["terminal_mention_delay_seconds", "mention_effort", "mention_cap_usd"]}),
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
class ListenStateAdmin(admin.ModelAdmin):
    list_display = ["motion", "agent", "due_at", "last_post_at", "considered_through", "idle_level", "rested"]
    list_filter = ["rested"]


@admin.register(Consideration)
class ConsiderationAdmin(admin.ModelAdmin):
    list_display = ["created_at", "motion", "agent", "kind", "status", "screen_verdict", "turn"]
    list_filter = ["kind", "status"]
    raw_id_fields = ["turn", "state"]


@admin.register(MentionWake)
class MentionWakeAdmin(admin.ModelAdmin):
    list_display = ["created_at", "agent", "status", "due_at", "turn"]
    raw_id_fields = ["message", "turn"]


@admin.register(Spend)
class SpendAdmin(admin.ModelAdmin):
    list_display = [
        "at",
        "kind",
        "motion",
        "agent",
        "amount",
        "reserved",
        "settled",
        "counted",
        "full",
        "note",
    ]
    list_filter = ["kind", "settled", "counted", "day"]
    raw_id_fields = ["turn", "consideration"]
