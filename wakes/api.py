"""POST /api/motions/<slug>/typing/: a person's "I am typing" ping (the loop waits for them)."""

from __future__ import annotations

from datetime import timedelta

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from motion_runner.models import Motion

from . import clock
from .models import Dials, TypingPing


class TypingPingView(APIView):
    @extend_schema(
        request=None,
        responses={
            200: inline_serializer("Typing", {"typing": serializers.ListField(child=serializers.CharField())})
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        motion = get_object_or_404(Motion, slug=slug)
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to post in a Motion.")
        now = clock.now()
        who = request.user.get_username()
        TypingPing.objects.update_or_create(motion=motion, who=who, defaults={"at": now})
        ttl = timedelta(seconds=Dials.load().typing_ttl_seconds)
        others = (
            TypingPing.objects.filter(motion=motion, at__gt=now - ttl)
            .exclude(who=who)
            .values_list("who", flat=True)
        )
        return Response({"typing": sorted(others)}, status=status.HTTP_200_OK)
