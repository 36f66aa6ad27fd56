"""Chat-history uploads (docs/capture.md): upload -> a queued import job -> its report; and
conversations a client posts whole (POST /api/v1/conversations/), answered with what was kept."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.openapi import ErrorOutputSerializer, error_responses
from governance import access
from memories.api.idempotency import HEADER_PARAMETER, idempotent
from memories.capture import conversations, ingest, jobs, selectors
from memories.models import ChatImportStatus


class ChatImportInputSerializer(serializers.Serializer):
    # Declared fields named like Field attributes (DRF's metaclass moves them off the class).
    source = serializers.ChoiceField(  # type: ignore[assignment]
        choices=ingest.SOURCES, help_text="claude_code, chatgpt, cursor or jsonl (SAM's generic format)")
    file = serializers.FileField(help_text="One history file, or a .zip of a folder (a ~/.claude/projects "
                                           "tree, ChatGPT's export archive)")


class ChatImportPendingSerializer(serializers.Serializer):
    embedding = serializers.IntegerField(source="embedding_pending",
                                         help_text="Memories of this import still waiting for their "
                                                   "embedding")
    checks = serializers.IntegerField(source="checks_pending",
                                      help_text="Memories of this import still waiting for their write "
                                                "checks (duplicate, supersession: docs/lifecycle.md)")


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
    extraction_done = serializers.BooleanField(source="progress.extraction_done",
                                               help_text="The job has read the history (done or failed)")
    memories = serializers.IntegerField(source="progress.memories",
                                        help_text="Memories this import created (still existing)")
    pending = ChatImportPendingSerializer(source="progress")
    embedding_failed = serializers.IntegerField(source="progress.embedding_failed",
                                                help_text="Memories whose embedding failed: no checks until "
                                                          "they are embedded again (sam_reembed)")
    final = serializers.BooleanField(source="progress.final",
                                     help_text="Nothing is pending: extraction, embedding and write checks "
                                               "are finished, and the memories are what they will stay")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True,
                                           help_text="When a worker began it (null while queued); a run "
                                                     "longer than the job's timeout is failed "
                                                     "(docs/capture.md)")
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
        return Response(ChatImportOutputSerializer(selectors.with_progress(chat_import)).data,
                        status=status.HTTP_202_ACCEPTED)


class ChatImportDetailView(APIView):
    @extend_schema(responses={200: ChatImportOutputSerializer, **error_responses(401, 404)},
                   summary="An import's status and report (who uploaded it, or the space's owners)")
    def get(self, request: Request, pk: str) -> Response:
        return Response(ChatImportOutputSerializer(selectors.chat_import_get(actor=request.user,
                                                                             import_id=pk)).data)


# --- conversations posted by a client (docs/capture.md, "Conversations") ------------------


class ConversationToolCallInputSerializer(serializers.Serializer):
    id = serializers.CharField(max_length=200)
    name = serializers.CharField(max_length=200)
    input = serializers.DictField(required=False, default=dict)


class ConversationToolResultInputSerializer(serializers.Serializer):
    call_id = serializers.CharField(max_length=200)
    content = serializers.CharField(allow_blank=True, trim_whitespace=False)
    is_error = serializers.BooleanField(required=False, default=False)


class ConversationMessageInputSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant", "tool"])
    content = serializers.CharField(allow_blank=True, trim_whitespace=False,
                                    help_text="The message's text (at most "
                                              "SAM_CONVERSATION_MAX_MESSAGE_CHARS characters: 413 beyond)")
    time = serializers.DateTimeField(required=False, help_text="When it was said (ISO 8601)")
    id = serializers.CharField(max_length=200, required=False, allow_blank=True,
                               help_text="Your id of the message: answered with the evidence it gave")
    tool_calls = ConversationToolCallInputSerializer(many=True, required=False, default=list)
    tool_results = ConversationToolResultInputSerializer(many=True, required=False, default=list)


class ConversationCreateInputSerializer(serializers.Serializer):
    space = serializers.CharField(max_length=64)
    conversation_id = serializers.CharField(
        max_length=200, required=False, allow_blank=True,
        help_text="Your id of the conversation: posting it again, grown, reads only its new messages")
    title = serializers.CharField(max_length=500, required=False, allow_blank=True)
    # A ListField, not many=True: an empty list is an error of `messages` itself, and a bad
    # message one of `messages[i].field`.
    messages = serializers.ListField(
        child=ConversationMessageInputSerializer(), allow_empty=False, min_length=1,
        help_text="In the order they were said; up to SAM_CONVERSATION_INLINE_MESSAGES (50) are captured "
                  "in the request, more by a job (202); at most SAM_CONVERSATION_MAX_MESSAGES (2000)")


class ConversationEvidenceOutputSerializer(serializers.Serializer):
    quote = serializers.CharField(allow_null=True, help_text="The words it was taken from, redacted as "
                                                             "stored (null once answered for a rejected one)")
    message_index = serializers.IntegerField(allow_null=True)
    message_id = serializers.CharField(allow_null=True)


class ConversationReviewOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.CharField()
    status = serializers.CharField()


class ConversationItemOutputSerializer(serializers.Serializer):
    memory_id = serializers.CharField(allow_null=True)
    kind = serializers.CharField()
    rule = serializers.CharField()
    title = serializers.CharField(allow_null=True)
    evidence = ConversationEvidenceOutputSerializer()
    pending = serializers.BooleanField(required=False, help_text="Waits for its embedding or write checks")
    supersedes = serializers.CharField(required=False, allow_null=True)
    superseded_by = serializers.CharField(required=False, allow_null=True)
    merged_from = serializers.CharField(required=False)
    review = ConversationReviewOutputSerializer(required=False)
    other = serializers.CharField(required=False, allow_null=True)
    errors = serializers.DictField(  # type: ignore[assignment]
        required=False, child=serializers.ListField(child=serializers.CharField()))


class PendingCountsOutputSerializer(serializers.Serializer):
    embedding = serializers.IntegerField()
    checks = serializers.IntegerField()


class ConversationOutputSerializer(serializers.Serializer):
    id = serializers.CharField(allow_null=True, help_text="Ask GET /api/v1/conversations/{id}/ (null: "
                                                          "incognito, nothing kept)")
    space = serializers.CharField()
    conversation_id = serializers.CharField(allow_null=True)
    status = serializers.ChoiceField(choices=ChatImportStatus.choices)
    kept = serializers.BooleanField()
    message = serializers.CharField()
    error = serializers.CharField(allow_null=True)
    messages = serializers.IntegerField(allow_null=True)
    messages_read = serializers.IntegerField(help_text="New messages read this time")
    skipped = serializers.BooleanField(help_text="Captured before as it is: nothing read")
    created = ConversationItemOutputSerializer(many=True)
    reinforced = ConversationItemOutputSerializer(many=True)
    superseded = ConversationItemOutputSerializer(many=True)
    review = ConversationItemOutputSerializer(many=True)
    rejected = ConversationItemOutputSerializer(many=True)
    would_keep = serializers.IntegerField(help_text="Incognito: memories that would have been kept")
    pending = serializers.BooleanField(help_text="False once the outcome is final")
    pending_counts = PendingCountsOutputSerializer()
    created_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def _keep_conversation(response: Response) -> dict[str, Any] | None:
    """A replay needs only the capture's id (its answer is read again, as things stand then);
    an incognito answer kept nothing and keeps no key."""
    capture_id = response.data.get("id") if isinstance(response.data, dict) else None
    return {"id": capture_id} if capture_id else None


def _replay_conversation(request: Request, answer: dict[str, Any]) -> Response:
    found = conversations.conversation_get(actor=request.user, capture_id=answer["id"])
    return Response(ConversationOutputSerializer(found).data)


TOO_LARGE = OpenApiResponse(ErrorOutputSerializer, description=(
    "A message over SAM_CONVERSATION_MAX_MESSAGE_CHARS, or more than SAM_CONVERSATION_MAX_MESSAGES messages"))


class ConversationCreateView(APIView):
    @extend_schema(
        request=ConversationCreateInputSerializer,
        responses={200: ConversationOutputSerializer,
                   202: OpenApiResponse(ConversationOutputSerializer,
                                        description="More than SAM_CONVERSATION_INLINE_MESSAGES messages: "
                                                    "a job captures it; GET its id"),
                   **error_responses(400, 401, 403, 404, 409,
                                     e403="You may read the space but not write to it",
                                     e409="The space's memory mode refuses writes (paused, off): nothing "
                                          "kept; or an Idempotency-Key reused with another body"),
                   413: TOO_LARGE},
        parameters=[HEADER_PARAMETER],
        summary="Post a finished conversation; answers what SAM remembered from it")
    @idempotent("conversations.create", keep=_keep_conversation, replay=_replay_conversation)
    def post(self, request: Request) -> Response:
        data = ConversationCreateInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        body = data.validated_data
        posted = conversations.PostedConversation(
            space=body["space"], messages=body["messages"], conversation_id=body.get("conversation_id", ""),
            title=body.get("title", ""))
        answer = conversations.conversation_capture(actor=request.user, posted=posted)
        queued = answer["status"] == ChatImportStatus.QUEUED
        return Response(ConversationOutputSerializer(answer).data,
                        status=status.HTTP_202_ACCEPTED if queued else status.HTTP_200_OK)


class ConversationDetailView(APIView):
    @extend_schema(responses={200: ConversationOutputSerializer, **error_responses(401, 404)},
                   summary="What a posted conversation left behind, as it stands now (final once "
                           "`pending` is false)")
    def get(self, request: Request, pk: str) -> Response:
        found = conversations.conversation_get(actor=request.user, capture_id=pk)
        return Response(ConversationOutputSerializer(found).data)
