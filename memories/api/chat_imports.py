"""Chat-history uploads (docs/capture.md): upload -> a queued import job -> its report."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from governance import access
from memories.capture import ingest, jobs, uploads
from memories.models import ChatImport, ChatImportStatus
from samsite.api.openapi import error_responses
from samsite.core.errors import InvalidInput, NotFound


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


class SpaceChatImportView(APIView):
    parser_classes = [MultiPartParser]

    @extend_schema(request={"multipart/form-data": ChatImportInputSerializer},
                   responses={202: ChatImportOutputSerializer,
                              **error_responses(400, 401, 403, 404, 409,
                                                e403="The space does not accept this source "
                                                     "(capture_sources), or you may not write to it",
                                                e409="The space's memory mode refuses writes now")},
                   summary="Upload a chat history to import into the space (a job)")
    def post(self, request: Request, slug: str) -> Response:
        space = access.access_space(request.user, slug=slug, action="write")
        data = ChatImportInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        source, upload = data.validated_data["source"], data.validated_data["file"]
        ingest.check_allowed(actor=request.user, space=space, source=source)
        limit = int(settings.SAM_CHAT_IMPORT_MAX_BYTES)
        if upload.size > limit:
            raise InvalidInput("The history is too large.",
                               fields={"file": [f"Must be at most {limit} bytes."]})
        chat_import = ChatImport(space=space, source=source, file_name=(upload.name or "")[:255],
                                 size_bytes=upload.size, created_by=access.user_or_none(request.user))
        path = uploads.store(chat_import.pk, upload)
        chat_import.save()
        jobs.enqueue(chat_import, path)
        return Response(ChatImportOutputSerializer(chat_import).data, status=status.HTTP_202_ACCEPTED)


class ChatImportDetailView(APIView):
    @extend_schema(responses={200: ChatImportOutputSerializer, **error_responses(401, 404)},
                   summary="An import's status and report (who uploaded it, or the space's owners)")
    def get(self, request: Request, pk: str) -> Response:
        # Through the gateway: only imports of spaces the caller still reads, then only their own
        # (or any, for the space's owners).
        chat_import = access.restrict(ChatImport.objects.select_related("space"), request.user) \
            .filter(pk=pk).first()
        mine = chat_import is not None and chat_import.created_by_id == getattr(request.user, "pk", None)
        if chat_import is None or not (mine or access.can(request.user, "manage", chat_import.space)):
            raise NotFound(f"No chat import '{pk}'.")
        return Response(ChatImportOutputSerializer(chat_import).data)
