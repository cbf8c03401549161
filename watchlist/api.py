"""`/api/watches/`: list, add, edit, pause/resume, delete a Motion's watches."""

from __future__ import annotations

from django.utils import timezone
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import permissions, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from motion_runner.models import Motion
from motion_runner.people.access import access

from .conf import app_settings as settings  # the app's settings, with defaults (conf.py)
from .kinds import KINDS, InvalidTarget, get_kind
from .models import Watch
from .tasks import check_soon


class ReadableMotionField(serializers.SlugRelatedField):
    """A Motion by its slug, among those the request's caller may read: one it may not read is
    "does not exist" as a missing one is, at the same step, so no error order tells them apart."""

    def get_queryset(self):
        request = self.context.get("request")
        return access().readable(getattr(request, "user", None), Motion.objects.all())


class WatchSerializer(serializers.ModelSerializer):
    motion = ReadableMotionField(slug_field="slug", queryset=Motion.objects.all())
    kind = serializers.ChoiceField(choices=list(KINDS))
    options = serializers.JSONField(required=False)
    state = serializers.SerializerMethodField()

    class Meta:
        model = Watch
        fields = [
            "id",
            "motion",
            "kind",
            "target",
            "options",
            "label",
            "wake",
            "enabled",
            "interval",
            "state",
            "last_checked_at",
            "next_due_at",
            "consecutive_failures",
            "last_error",
            "disabled_reason",
            "created_at",
        ]
        read_only_fields = [
            "state",
            "last_checked_at",
            "next_due_at",
            "consecutive_failures",
            "last_error",
            "disabled_reason",
            "created_at",
        ]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_state(self, watch: Watch) -> dict:
        state = watch.state_dict()
        state.pop("text", None)  # the stored page text is for diffs, not for listing
        return state

    def validate_interval(self, value: int) -> int:
        low = settings.WATCH_MIN_INTERVAL_SECONDS
        if value < low:
            raise serializers.ValidationError(f"at least {low} seconds: watches are checked every 90 s")
        if value > 7 * 24 * 3600:
            raise serializers.ValidationError("at most a week (604800 seconds)")
        return value

    def validate(self, attrs: dict) -> dict:
        instance = self.instance
        kind_name = attrs.get("kind", instance.kind if instance else None)
        target = attrs.get("target", instance.target if instance else "")
        options = attrs.get("options", instance.options if instance else {}) or {}
        if not isinstance(options, dict):
            raise serializers.ValidationError({"options": ["must be a JSON object"]})
        if instance and "kind" in attrs and attrs["kind"] != instance.kind and "target" not in attrs:
            raise serializers.ValidationError({"target": ["changing the kind needs a new target too"]})
        try:
            kind = get_kind(kind_name)
            target, options = kind.clean(target, options)
        except InvalidTarget as exc:
            raise serializers.ValidationError({exc.field: [str(exc)]}) from exc
        attrs["target"], attrs["options"] = target, options
        if attrs.get("enabled") and instance and not instance.enabled:
            # Resuming a stopped watch starts it afresh.
            attrs.update(disabled_reason="", consecutive_failures=0, failure_notified=False)
        return attrs


class WatchViewSet(viewsets.ModelViewSet):
    """A Motion's watches. Filter with `?motion=<slug>`. Read by whoever may read the Motion;
    written by its own agents and by people holding the watch permissions (docs/security.md)."""

    serializer_class = WatchSerializer
    permission_classes = [permissions.IsAuthenticatedOrReadOnly]

    def get_queryset(self):
        readable = access().readable(self.request.user, Motion.objects.all()).values("slug")
        queryset = Watch.objects.select_related("motion").filter(motion__in=readable).order_by("pk")
        if slug := self.request.query_params.get("motion"):
            queryset = queryset.filter(motion_id=slug)
        return queryset

    def check_write(self, motion: Motion, action: str) -> None:
        if not access().can_write_watch(self.request.user, motion, action):
            raise PermissionDenied(f"You may not {action} watches in Motion {motion.slug!r}.")

    def perform_create(self, serializer: WatchSerializer) -> None:
        motion = serializer.validated_data["motion"]
        if not access().can_read(self.request.user, motion):
            raise serializers.ValidationError({"motion": [f"Object with slug={motion.slug} does not exist."]})
        self.check_write(motion, "add")
        serializer.save()
        check_soon()  # its first check ("now watching") within seconds, not at the next cycle

    def perform_update(self, serializer: WatchSerializer) -> None:
        self.check_write(serializer.instance.motion, "change")
        moved_to = serializer.validated_data.get("motion")
        if moved_to is not None and moved_to.pk != serializer.instance.motion_id:
            self.check_write(moved_to, "add")
        serializer.save()

    def perform_destroy(self, instance: Watch) -> None:
        self.check_write(instance.motion, "delete")
        instance.delete()

    @action(detail=True, methods=["post"])
    def pause(self, request: Request, pk: str | None = None) -> Response:
        watch = self.get_object()
        self.check_write(watch.motion, "change")
        Watch.objects.filter(pk=watch.pk).update(enabled=False)
        watch.refresh_from_db()
        return Response(self.get_serializer(watch).data)

    @action(detail=True, methods=["post"])
    def resume(self, request: Request, pk: str | None = None) -> Response:
        watch = self.get_object()
        self.check_write(watch.motion, "change")
        Watch.objects.filter(pk=watch.pk).update(
            enabled=True,
            disabled_reason="",
            consecutive_failures=0,
            failing_since=None,
            failure_notified=False,
            next_due_at=timezone.now(),
        )
        watch.refresh_from_db()
        return Response(self.get_serializer(watch).data)
