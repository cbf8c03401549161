"""The signed-in person's own notices and push subscriptions. Everyone else is refused: a
notice, and a browser's push endpoint, are nobody else's to read.

GET  /api/notices/            the list, newest first, and the unseen count
POST /api/notices/seen/       {"ids": [..]} or {"all": true}: marked seen
GET  /api/notices/push/       the VAPID public key browsers subscribe with ("" when push is off)
POST /api/notices/push/       {"endpoint", "keys": {"p256dh", "auth"}}: this browser opts in
DELETE /api/notices/push/     {"endpoint"}: this browser opts out
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner.people.access import actor_agent

from ..models import PushSubscription, clock
from .listing import notices_of, shown, unseen_count
from .push import EndpointRefused, check_endpoint, enabled, public_key


def person_of(request: Request):
    if actor_agent(request.user) is not None:
        raise PermissionDenied("Notices are a person's: an agent key has none.")
    if not request.user.is_authenticated:
        raise NotAuthenticated("Sign in to read your notices.")
    return request.user


NoticesOut = inline_serializer(
    "Notices",
    {
        "unseen": serializers.IntegerField(),
        "notices": serializers.ListField(child=serializers.DictField()),
    },
)


class NoticeList(APIView):
    @extend_schema(
        responses={200: NoticesOut},
        description="The signed-in person's notices: answered you, mentioned you.",
    )
    def get(self, request: Request) -> Response:
        person = person_of(request)
        asked_for = request.query_params.get("person")
        if asked_for and asked_for != person.get_username():
            raise PermissionDenied("Only a person reads their own notices.")
        return Response({"unseen": unseen_count(person), "notices": shown(person, limit=50)})


class SeenIn(serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**31 - 1), required=False, max_length=500
    )
    all = serializers.BooleanField(required=False, default=False)


class NoticesSeen(APIView):
    @extend_schema(request=SeenIn, responses={200: NoticesOut})
    def post(self, request: Request) -> Response:
        person = person_of(request)
        asked = SeenIn(data=request.data)
        asked.is_valid(raise_exception=True)
        if not asked.validated_data["all"] and not asked.validated_data.get("ids"):
            raise ValidationError({"ids": ['send {"ids": [..]} or {"all": true}']})
        theirs = notices_of(person)
        if not asked.validated_data["all"]:
            ids = set(asked.validated_data["ids"])
            if theirs.filter(pk__in=ids).count() != len(ids):
                raise PermissionDenied("Only a person marks their own notices seen; nothing was marked.")
            theirs = theirs.filter(pk__in=ids)
        theirs.filter(seen_at__isnull=True).update(seen_at=clock.now())
        return Response({"unseen": unseen_count(person), "notices": shown(person, limit=50)})


class Keys(serializers.Serializer):
    p256dh = serializers.CharField(max_length=200)
    auth = serializers.CharField(max_length=100)


class SubscriptionIn(serializers.Serializer):
    endpoint = serializers.CharField(max_length=1000)
    keys = Keys()


class EndpointIn(serializers.Serializer):
    endpoint = serializers.CharField(max_length=1000)


PushOut = inline_serializer(
    "PushState", {"enabled": serializers.BooleanField(), "public_key": serializers.CharField()}
)


class PushSubscriptionView(APIView):
    @extend_schema(responses={200: PushOut})
    def get(self, request: Request) -> Response:
        person_of(request)
        return Response({"enabled": enabled(), "public_key": public_key()})

    @extend_schema(request=SubscriptionIn, responses={201: PushOut})
    def post(self, request: Request) -> Response:
        person = person_of(request)
        if not enabled():
            raise ValidationError({"push": ["Web Push is off here (no VAPID key is configured)"]})
        given = SubscriptionIn(data=request.data)
        given.is_valid(raise_exception=True)
        try:
            endpoint = check_endpoint(given.validated_data["endpoint"])
        except EndpointRefused as refused:
            raise ValidationError({"endpoint": [str(refused)]}) from refused
        keys = given.validated_data["keys"]
        # The endpoint is the browser's: a person signing in on it takes it over.
        PushSubscription.objects.update_or_create(
            endpoint=endpoint,
            defaults={
                "person": person,
                "p256dh": keys["p256dh"],
                "auth": keys["auth"],
                "created_at": clock.now(),
                "last_error": "",
            },
        )
        return Response({"enabled": True, "public_key": public_key()}, status=status.HTTP_201_CREATED)

    @extend_schema(request=EndpointIn, responses={204: None})
    def delete(self, request: Request) -> Response:
        person = person_of(request)
        given = EndpointIn(data=request.data)
        given.is_valid(raise_exception=True)
        PushSubscription.objects.filter(person=person, endpoint=given.validated_data["endpoint"]).delete()
        return Response(status=status.HTTP_204_NO_CONTENT)
