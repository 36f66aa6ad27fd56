"""POST /memories/{id}/restrict/: hide one memory from roles below a given one."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.fields import JSONInputSerializer
from core.api.openapi import error_responses
from governance.api.serializers import RESTRICT_CHOICES
from memories.restrictions import memory_restrict

ERRORS = error_responses(400, 401, 403, 404, e403="Visible to you, but you may not change it")


class MemoryRestrictInputSerializer(JSONInputSerializer):
    restricted_to = serializers.ChoiceField(choices=RESTRICT_CHOICES, allow_null=True)
    reason = serializers.CharField(max_length=500, required=False, allow_blank=True, default="")


class MemoryRestrictView(APIView):
    @extend_schema(request=MemoryRestrictInputSerializer,
                   responses={200: MemoryRestrictInputSerializer, **ERRORS,
                              **error_responses(409, e409="The memory mode refuses writes now")},
                   summary="Restrict one memory to a role and above (null lifts it)")
    def post(self, request: Request, pk: str) -> Response:
        data = MemoryRestrictInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        memory_restrict(actor=request.user, memory_id=pk, min_role=data.validated_data["restricted_to"],
                        reason=data.validated_data["reason"])
        return Response({"restricted_to": data.validated_data["restricted_to"],
                         "reason": data.validated_data["reason"]})
