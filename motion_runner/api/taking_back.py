"""`DELETE /api/messages/<id>/` and `PATCH /api/messages/<id>/` (`{"text": …}`): a person takes back
what they said (motion_runner/retract.py). A person signed in on the page, their own post; staff
signed in with their SSH key may delete anyone's. Agents (their keys) and everyone else are refused;
a post in a Motion the reader may not read is a 404, as one that does not exist."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import APIException, NotAuthenticated, PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import Message, TakenBack
from ..people.access import readable_motion
from ..people.context import sign_in_of
from ..retract import Refused, Taker, take_back_as
from .serializers import _iso


class EditBody(serializers.Serializer):
    text = serializers.CharField(max_length=100_000, trim_whitespace=True)


TAKEN_BACK = inline_serializer(
    "TakenBack",
    {
        "id": serializers.UUIDField(),
        "kind": serializers.CharField(help_text="deleted or edited"),
        "by": serializers.CharField(),
        "at": serializers.DateTimeField(),
        "text": serializers.CharField(help_text="What the post says now."),
        "scrubbed": serializers.IntegerField(help_text="Copies the words were taken out of."),
        "reached": serializers.ListField(
            child=serializers.CharField(), help_text="Agents whose turns already read it: not called back."
        ),
    },
)


class TooMany(APIException):
    status_code = 429
    default_detail = "too many taken back"


class MessageDetail(APIView):
    authentication_classes = [SessionAuthentication]  # people on the page; an agent key is no one here

    def get_message(self, request: Request, pk) -> Message:
        if not request.user.is_authenticated:
            raise NotAuthenticated("Sign in to take back what you said.")
        message = Message.objects.filter(pk=pk).only("motion_id").first()
        readable_motion(request.user, message.motion_id if message is not None else "")
        return Message.objects.get(pk=pk)

    def answer(self, request: Request, pk, text: str | None) -> Response:
        message = self.get_message(request, pk)
        try:
            change = take_back_as(message, Taker(request.user, sign_in_of(request)), text)
        except Refused as refused:
            if refused.status == 429:
                raise TooMany(str(refused)) from None
            if refused.status == 400:
                raise ValidationError({"text": [str(refused)]}) from None
            raise PermissionDenied(str(refused)) from None
        return Response(said(change))

    @extend_schema(request=None, responses=TAKEN_BACK)
    def delete(self, request: Request, pk) -> Response:
        return self.answer(request, pk, None)

    @extend_schema(request=EditBody, responses=TAKEN_BACK)
    def patch(self, request: Request, pk) -> Response:
        body = EditBody(data=request.data)
        body.is_valid(raise_exception=True)
        return self.answer(request, pk, body.validated_data["text"])


def said(change: TakenBack) -> dict:
    return {
        "id": str(change.message_id),
        "kind": change.kind,
        "by": change.by,
        "at": _iso(change.at),
        "text": Message.objects.filter(pk=change.message_id).values_list("text", flat=True).first(),
        "scrubbed": change.scrubbed,
        "reached": change.reached,
    }
