from django.contrib import admin, messages
from django.core.exceptions import ValidationError
from django.forms import ModelForm

from .checker import check_all_now
from .kinds import InvalidTarget, get_kind
from .models import Watch
from .tasks import check_soon


class WatchForm(ModelForm):
    class Meta:
        model = Watch
        fields = ["motion", "kind", "target", "options", "label", "wake", "enabled", "interval"]

    def clean(self):
        data = super().clean()
        if data.get("kind") and data.get("target") is not None:
            try:
                data["target"], data["options"] = get_kind(data["kind"]).clean(
                    data["target"], data.get("options") or {}
                )
            except InvalidTarget as exc:
                raise ValidationError(
                    {exc.field if exc.field in self.fields else "target": str(exc)}
                ) from exc
        return data


@admin.register(Watch)
class WatchAdmin(admin.ModelAdmin):
    form = WatchForm
    list_display = [
        "__str__",
        "motion",
        "kind",
        "wake",
        "enabled",
        "last_checked_at",
        "consecutive_failures",
        "last_error",
    ]
    list_filter = ["kind", "wake", "enabled"]
    search_fields = ["target", "label", "motion__slug"]
    readonly_fields = [
        "etag",
        "last_modified",
        "last_revision",
        "last_block",
        "text_hash",
        "extra",
        "settings_hash",
        "last_checked_at",
        "claimed_until",
        "consecutive_failures",
        "failing_since",
        "failure_notified",
        "last_error",
        "disabled_reason",
    ]
    actions = ["check_now", "pause", "resume"]

    def get_fieldsets(self, request, obj=None):
        """A person sets what to watch; what the checker keeps is shown only once it exists."""
        person = [(None, {"fields": WatchForm.Meta.fields})]
        if obj is None:
            return person
        return person + [
            ("What the checker keeps", {"classes": ["collapse"], "fields": self.readonly_fields})
        ]

    @admin.action(description="Check now", permissions=["change"])
    def check_now(self, request, queryset):
        check_all_now(queryset)
        check_soon()
        messages.info(
            request, f"{queryset.count()} watch(es) being checked now: their Motion says what was found."
        )

    @admin.action(description="Pause", permissions=["change"])
    def pause(self, request, queryset):
        queryset.update(enabled=False)

    @admin.action(description="Resume", permissions=["change"])
    def resume(self, request, queryset):
        queryset.update(enabled=True, disabled_reason="", consecutive_failures=0, failure_notified=False)
