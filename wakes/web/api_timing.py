"""GET/POST /api/motions/<slug>/timing/: the timing knobs memory-lane's people set per Mood on its
page (debounce, unprompted looks, considerations per hour) and the global consider $/day, set
here by the Motion's granters, not only in the admin.

Reading: whoever may read the Motion. Setting: a person who may post in it and may grant full tools
(signed in with an SSH key, or named in full_tools_for): each knob changes what the agents spend.
A Motion's knob is its DialOverride's field (blank: the global dial); the $/day is the global
dial (Dials.daily_budget_usd), every Motion's, so only staff set it. Each change is said in
the thread, with who.

Under memory-lane's binding its own rows are these knobs (consider_after, idle_after,
considers_per_hour, consider_usd_per_day: motion_runner/memory_lane/timing.py): read over the dials
and written there instead, one source; what it cannot keep (a fraction of a second, past its
bounds) is refused, nothing written.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner import signals
from motion_runner.ingest.system_lines import post_system_message
from motion_runner.lib.ids import system_uuid
from motion_runner.models import Kind, Motion
from motion_runner.people.access import access, is_person, readable_motion
from motion_runner.people.context import sign_in_of

from ..models import DialOverride, Dials, clock
from ..models.in_force import global_daily_budget
from ..turn.requests import person_may_grant

# knob: (words for the thread, type, lowest, highest). None as a value: back to the global dial.
MOTION_KNOBS = {
    "quiet_seconds": ("debounce (seconds of quiet before a look)", float, 1, 3600),
    "idle_looks": ("unprompted looks (looks of quiet before one; 0: never)", int, 0, 1_000_000),
    "considerations_per_hour": ("considerations per hour", int, 0, 120),
}
GLOBAL_KNOB = "consider_usd_per_day"
KNOBS = (*MOTION_KNOBS, GLOBAL_KNOB)
MAX_USD_PER_DAY = Decimal("1000")

TimingOut = inline_serializer(
    "Timing",
    {
        "motion": serializers.DictField(help_text="This Motion's knobs in force, and which are its own."),
        GLOBAL_KNOB: serializers.CharField(),
    },
)


class TimingIn(serializers.Serializer):
    knob = serializers.ChoiceField(choices=KNOBS)
    value = serializers.CharField(allow_null=True, allow_blank=True, max_length=20)


def timing(motion: Motion) -> dict:
    dials = Dials.load()
    own = DialOverride.objects.filter(motion=motion, agent__isnull=True).first()
    source = signals.steering_source()
    kept = source.timing(motion.pk, None, dials.tick_seconds) if source is not None else {}
    knobs = {}
    for name in MOTION_KNOBS:
        mine = getattr(own, name, None) if own is not None else None
        if name in kept:  # memory-lane's row, under its binding: over the dials (dials.resolve)
            value, is_own = kept[name]
        else:
            value, is_own = (mine, True) if mine is not None else (getattr(dials, name), False)
        knobs[name] = {"value": value, "own": is_own}
    return {"motion": knobs, GLOBAL_KNOB: str(global_daily_budget(dials))}


def keep(motion: Motion, knob: str, value, who: str) -> None:
    """Write the change where the knobs are kept: memory-lane's rows under its binding, else the dials."""
    if (source := signals.steering_source()) is not None:
        try:
            if knob == GLOBAL_KNOB:
                source.write_daily_budget(value, who)
            else:
                source.write_timing(motion, knob, value, Dials.load().tick_seconds, who)
        except signals.SteeringRefused as refused:
            raise ValidationError({"value": [str(refused)]}) from refused
    elif knob == GLOBAL_KNOB:
        dials = Dials.load()
        dials.daily_budget_usd = value
        dials.save(update_fields=["daily_budget_usd"])
    else:
        DialOverride.objects.update_or_create(motion=motion, agent=None, defaults={knob: value})


def parsed(knob: str, raw: str | None):
    if raw is None or str(raw).strip() == "":
        if knob == GLOBAL_KNOB:
            raise ValidationError({"value": ["the $/day is a number of dollars"]})
        return None
    if knob == GLOBAL_KNOB:
        try:
            value = Decimal(str(raw)).quantize(Decimal("0.01"))
        except InvalidOperation as exc:
            raise ValidationError({"value": ["a number of dollars, e.g. 10 or 12.50"]}) from exc
        if not Decimal(0) <= value <= MAX_USD_PER_DAY:
            raise ValidationError({"value": [f"between $0 and ${MAX_USD_PER_DAY}"]})
        return value
    words, kind, low, high = MOTION_KNOBS[knob]
    try:
        value = kind(str(raw))
    except ValueError as exc:
        raise ValidationError({"value": [f"{words}: a {'whole ' if kind is int else ''}number"]}) from exc
    if not low <= value <= high:
        raise ValidationError({"value": [f"{words}: between {low} and {high}"]})
    return value


class TimingView(APIView):
    @extend_schema(responses={200: TimingOut})
    def get(self, request: Request, slug: str) -> Response:
        return Response(timing(readable_motion(request.user, slug)))

    @extend_schema(request=TimingIn, responses={201: TimingOut})
    def post(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to change this Motion's timing.")
        motion = readable_motion(request.user, slug)
        if not is_person(request.user) or not access().can_post(request.user, motion):
            raise PermissionDenied("Only a person who may post in this Motion changes its timing.")
        allowed, why = person_may_grant(request.user, sign_in_of(request))
        if not allowed:
            raise PermissionDenied(f"The timing changes what agents spend: {why}")
        body = TimingIn(data=request.data)
        body.is_valid(raise_exception=True)
        knob = body.validated_data["knob"]
        if knob == GLOBAL_KNOB and not request.user.is_staff:
            # Every Motion's, including ones this person may not read: set only by staff.
            raise PermissionDenied("The consider $/day is every Motion's: only staff set it.")
        value = parsed(knob, body.validated_data["value"])
        who = request.user.get_username()
        keep(motion, knob, value, who)
        if knob == GLOBAL_KNOB:
            said = f"{who} set the consider budget, every Motion's, to ${value} a day"
        else:
            shown = "the default" if value is None else value
            said = f"{who} set this Motion's {MOTION_KNOBS[knob][0]} to {shown}"
        post_system_message(
            motion,
            said,
            kind=Kind.WAKE,
            message_id=system_uuid("timing", motion.pk, knob, clock.now().isoformat()),
        )
        return Response({"change": said, **timing(motion)}, status=201)
