"""Chat-history uploads (docs/capture.md): upload -> a queued import job -> its report."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import error_responses
from governance import access
from memories.capture import ingest, jobs, selectors
from memories.models import ChatImportStatus


class ChatImportInputSerializer(serializers.Serializer):
    # Declared fields named like Field attributes (DRF's metaclass moves them off the class).
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=ingest.SOURCES, help_text="claude_code, chatgpt, cursor or jsonl (SAM's generic format)")
    file = serializers.FileField(help_text="One history file, or a .zip of a folder (a ~/.claude/projects "
                                           "tree, ChatGPT's export archive)")


class ChatImportOutputSerializer(serializers.Serializer):
    id = serializers.CharField()
    space = serializers.CharField(source="space.slug")
    source = serializers.CharField()  # type: ignore[assignment]
    status = serializers.ChoiceField(choices=ChatImportStatus.choices)
    file_name = serializers.CharField()
    size_bytes = serializers.IntegerField()
    report = serializers.DictField(help_text="When done: conversations seen and skipped, exchanges, "
                                             "memories created and reinforced, rejected candidates and "
                                             "unreadable items with reasons")
    error = serializers.CharField()
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)


class MayUploadToTheSpace(IsAuthenticated):
    """An upload's caller may write to the space the URL names, checked before the upload is
    read: a space they may not see is a 404 (one they only read a 403) whatever they sent, and
    no file is parsed for them. chat_import_create checks it again, as every service does."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        if not super().has_permission(request, view):
            return False
        if request.method == "POST":
            access.access_space(request.user, slug=view.kwargs["slug"], action="write")
        return True


class SpaceChatImportView(APIView):
    parser_classes = [MultiPartParser]
    permission_classes = [MayUploadToTheSpace]

    @extend_schema(request={"multipart/form-data": ChatImportInputSerializer},
                   responses={202: ChatImportOutputSerializer,
                              **error_responses(400, 401, 403, 404, 409,
                                                e403="The space does not accept this source "
                                                     "(capture_sources), or you may not write to it",
                                                e409="The space's memory mode refuses writes now")},
                   summary="Upload a chat history to import into the space (a job)")
    def post(self, request: Request, slug: str) -> Response:
        data = ChatImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        chat_import = jobs.chat_import_create(actor=request.user, space_slug=slug,
                                              source=data.validated_data["source"],
                                              upload=data.validated_data["file"])
        return Response(ChatImportOutputSerializer(chat_import).data, status=status.HTTP_202_ACCEPTED)


class ChatImportDetailView(APIView):
    @extend_schema(responses={200: ChatImportOutputSerializer, **error_responses(401, 404)},
                   summary="An import's status and report (who uploaded it, or the space's owners)")
    def get(self, request: Request, pk: str) -> Response:
        return Response(ChatImportOutputSerializer(selectors.chat_import_get(actor=request.user,
                                                                             import_id=pk)).data)
