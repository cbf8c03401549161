"""The room's controls: the scram (`/api/scram/`) and a Motion's menus (`/api/motions/<slug>/steer/`).

Who may: reading the scram, any signed-in person; raising or lifting it, staff and the people the
`scram_for` dial names. A Motion's menus: everyone who may post in it (a person); the settings
that widen trust or spend (the rules every wake obeys, model, effort, reads, a chatty discretion,
ultracode, the first wake's letter) only people who may grant full tools.
"""

from __future__ import annotations

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner.models import Agent, Motion, Scram
from motion_runner.people.access import access, is_person, readable_motion
from motion_runner.people.context import sign_in_of
from motion_runner.people.first_run import has_first_run_grant
from motion_runner.runner.stopping import ScramHeld, lift_scram, raise_scram

from ..consider_loop.handlers import release_held
from ..decision.listening_scopes import HERE, SCOPES, WIDE
from ..decision.steering import (
    AGENT_SETTINGS,
    WIDENING,
    WIDENING_VALUES,
    SteerError,
    change,
    context_fullness,
    describe,
    steer_history,
    steering_for,
)
from ..models import Dials, Steer
from ..models.in_force import resolve
from ..turn.requests import person_may_grant


class ScramSerializer(serializers.ModelSerializer):
    class Meta:
        model = Scram
        fields = ["reason", "raised_by", "raised_at", "lifted_by", "lifted_at", "holds"]


class ScramRaise(serializers.Serializer):
    """A scram's body: an object whose `reason` is text (a list, a number or a non-object body is
    a 400, never stored as Python's repr of it)."""

    reason = serializers.CharField(
        max_length=2000,
        trim_whitespace=True,
        error_messages={"blank": "say why: everyone reads it in every thread"},
    )

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise ValidationError({"non_field_errors": ['send a JSON object: {"reason": "…"}']})
        if "reason" in data and not isinstance(data["reason"], str):
            raise ValidationError({"reason": ["the reason is text"]})
        return super().to_internal_value(data)


def may_scram(user) -> bool:
    return is_person(user) and (user.is_staff or user.get_username() in (Dials.load().scram_for or []))


class ScramView(APIView):
    @extend_schema(responses=inline_serializer("ScramState", {"scram": ScramSerializer(allow_null=True)}))
    def get(self, request: Request) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to read the scram.")
        scram = Scram.holding()
        return Response({"scram": ScramSerializer(scram).data if scram else None})

    @extend_schema(request=ScramRaise, responses={201: ScramSerializer})
    def post(self, request: Request) -> Response:
        self.check_may(request)
        body = ScramRaise(data=request.data)
        body.is_valid(raise_exception=True)
        reason = body.validated_data["reason"]
        try:
            scram = raise_scram(request.user.get_username(), reason)
        except ScramHeld as held:
            raise ValidationError({"scram": [str(held)]}) from held
        return Response(ScramSerializer(scram).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: ScramSerializer})
    def delete(self, request: Request) -> Response:
        self.check_may(request)
        scram = lift_scram(request.user.get_username())
        if scram is None:
            raise ValidationError({"scram": ["no scram holds"]})
        release_held()  # mentions held meanwhile for agents that listen again
        return Response(ScramSerializer(scram).data)

    def check_may(self, request: Request) -> None:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to raise or lift a scram.")
        if not may_scram(request.user):
            raise PermissionDenied(
                "Only staff and the people the scram_for dial names raise or lift a scram."
            )


class SteerBody(serializers.Serializer):
    agent = serializers.CharField(required=False, allow_blank=True, max_length=64)
    setting = serializers.ChoiceField(choices=Steer.Setting.choices)
    value = serializers.CharField(required=False, allow_blank=True, max_length=4000)
    until = serializers.CharField(required=False, allow_blank=True, allow_null=True)
    scope = serializers.ChoiceField(
        choices=SCOPES,
        required=False,
        default=HERE,
        help_text="Listening only: this pair (here), every agent here (motion), the agent in every "
        "Motion (agent), every agent everywhere (all). The last two: people who may grant full tools.",
    )


MENUS = inline_serializer(
    "SteerMenus",
    {
        "agents": serializers.ListField(
            child=serializers.DictField(), help_text="Each agent's settings in force."
        ),
        "motion": serializers.DictField(help_text="The Motion's rules and archived."),
        "changes": serializers.ListField(child=serializers.DictField(), help_text="The newest changes."),
        "can_widen": serializers.BooleanField(help_text="May this reader set the widening settings."),
        "can_set_rules": serializers.BooleanField(help_text="May this reader set the rules."),
        "widening": serializers.ListField(child=serializers.CharField()),
    },
)


def may_widen(user, sign_in: str, setting: str) -> tuple[bool, str]:
    """A widening setting: someone who may grant full tools; the first run's account too
    (people/first_run.py), but never for the rules, which every wake obeys."""
    allowed, why = person_may_grant(user, sign_in)
    if allowed or setting == Steer.Setting.RULES or not has_first_run_grant(user):
        return allowed, why
    return True, "the first run's account (MOTION_RUNNER_FIRST_RUN_GRANTS, local only)"


def menus(motion: Motion, user, sign_in: str) -> dict:
    """What the thread's menus show: each agent's settings in force, the Motion's, the changes."""
    agents = []
    for agent in motion.agents.order_by("name"):
        steering = steering_for(motion.pk, agent.pk)
        values = {name: getattr(steering, name) for name in AGENT_SETTINGS}
        values["listening_until"] = steering.listening_until
        values["listening_everywhere"] = agent.listening  # the admin's switch
        context = context_fullness(motion.pk, agent)
        agents.append({"name": agent.name, **values, "set_by": steering.set_by, "context": context})
    steering = steering_for(motion.pk, None)
    changes = steer_history(motion, 30)
    return {
        "agents": agents,
        "motion": {
            "rules": steering.rules,
            "archived": steering.archived,
            "letter": steering.letter,
            "set_by": steering.set_by,
            # The chain guard's bound here (a dial, set in the admin): shown, not set, in the menus.
            "agent_chain_turns": resolve(motion.pk, None, steered=False).agent_chain_turns,
        },
        "changes": [{"text": describe(row), "at": row.at} for row in changes],
        "can_widen": may_widen(user, sign_in, Steer.Setting.MODEL)[0],
        "can_set_rules": may_widen(user, sign_in, Steer.Setting.RULES)[0],
        "widening": list(WIDENING),
    }


class SteerView(APIView):
    """GET: the menus' state, for whoever may read the Motion. POST: one change, by a person who
    may post there (widening ones by a person who may grant full tools)."""

    @extend_schema(responses={200: MENUS})
    def get(self, request: Request, slug: str) -> Response:
        motion = readable_motion(request.user, slug)
        return Response(menus(motion, request.user, sign_in_of(request)))

    @extend_schema(request=SteerBody, responses={201: MENUS})
    def post(self, request: Request, slug: str) -> Response:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to change how agents wake here.")
        motion = readable_motion(request.user, slug)
        if not is_person(request.user) or not access().can_post(request.user, motion):
            raise PermissionDenied("Only a person who may post in this Motion changes its menus.")
        body = SteerBody(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        setting = data["setting"]
        wide = data["scope"] in WIDE  # past this Motion: only someone who may grant, never a first run
        if wide or setting in WIDENING or data.get("value") in WIDENING_VALUES.get(setting, ()):
            if wide:
                allowed, why = person_may_grant(request.user, sign_in_of(request))
            else:
                allowed, why = may_widen(request.user, sign_in_of(request), setting)
            if not allowed:
                what = "a setting beyond this Motion" if data["scope"] in WIDE else setting
                raise PermissionDenied(f"{what} widens what an agent may spend or read: {why}")
        agent = None
        if name := (data.get("agent") or "").lstrip("@"):
            agent = Agent.objects.filter(name=name, motions=motion).first()
            if agent is None:
                raise ValidationError({"agent": [f"@{name} is not an agent of this Motion"]})
        until = None
        if raw := (data.get("until") or "").strip():
            until = parse_datetime(raw)
            if until is None or until.tzinfo is None:
                raise ValidationError({"until": ["an ISO time with its zone, e.g. 2026-12-01T18:00:00Z"]})
        try:
            row = change(motion, agent, setting, data.get("value", ""), until, request.user, data["scope"])
        except SteerError as error:
            raise ValidationError({"setting": [str(error)]}) from error
        if setting in (Steer.Setting.LISTENING, Steer.Setting.ARCHIVED):
            release_held(motion_id=motion.pk if row.motion_id else None)
        return Response(
            {"change": describe(row), **menus(motion, request.user, sign_in_of(request))}, status=201
        )
