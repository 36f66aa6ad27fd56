"""Feedback on memories and the review queue API (docs/lifecycle.md): input serializer -> one
service or selector call -> output serializer."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from core.api.fields import JSONInputSerializer, QueryParamsSerializer, comma_separated
from core.api.openapi import error_responses
from core.api.pagination import StandardPagination, paginated
from governance.scopes import reads_only_action
from memories import selectors
from memories.api.serializers import MemoryReasonInputSerializer
from memories.lifecycle import feedback
from memories.models import ReviewKind, ReviewStatus

ERRORS = error_responses(400, 401, 404)
WRITE_ERRORS = {
    **ERRORS,
    **error_responses(
        403, 409, e409="The memory mode refuses writes now (paused, off), or the item is closed already"
    ),
}


class FeedbackOutputSerializer(serializers.Serializer):
    memory = serializers.CharField(source="memory.id")
    confidence = serializers.FloatField(help_text="The memory's stored confidence after the feedback")
    reliability = serializers.CharField(source="memory.reliability")
    recorded = serializers.BooleanField(help_text="False when the memory mode keeps no trace of it")
    review_item = serializers.IntegerField(source="review_item.pk", allow_null=True, default=None)


class ReviewItemOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ReviewKind.choices)
    status = serializers.ChoiceField(choices=ReviewStatus.choices)
    space = serializers.CharField(source="space.slug")
    memory = serializers.CharField(source="memory_id")
    memory_title = serializers.CharField(source="memory.title")
    other = serializers.CharField(
        source="other_id", allow_null=True,
        help_text="Pairs (near_duplicate, contradiction): the newer memory"
    )
    other_title = serializers.CharField(source="other.title", allow_null=True, default=None)
    reason = serializers.CharField()
    evidence = serializers.DictField()
    resolution = serializers.CharField()
    resolved_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class ReviewListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Comma-separated space slugs")
    kind = serializers.ChoiceField(choices=ReviewKind.choices, required=False)
    status = serializers.ChoiceField(choices=ReviewStatus.choices, required=False, default=ReviewStatus.OPEN)


class ReviewResolveInputSerializer(JSONInputSerializer):
    action = serializers.ChoiceField(
        choices=["archive", "keep", "revised", "merge", "supersede", "reject", "dismiss"],
        help_text="archive_suggestion: archive, keep or dismiss; contested: archive, keep (confirmed), "
        "revised (you wrote a new version) or dismiss; training_failure: archive or dismiss. "
        "Pairs (near_duplicate, contradiction; `memory` is the older, `other` the newer): supersede "
        "(the newer replaces the older, which is archived), merge (the newer into the older, field by "
        "field with `fields`), keep (both hold), reject (the newer is wrong: archived) or dismiss",
    )
    note = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")
    # A declared field (DRF's metaclass moves it off the class), not Serializer.fields.
    fields = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ChoiceField(choices=["memory", "other"]), required=False, default=dict,
        help_text="With merge: the side each of title, content and summary comes from, e.g. "
        '{"content": "other"}; the older memory\'s by default. Phrases and tags are the union of both.',
    )


class FeedbackViews:
    """The feedback actions of MemoryViewSet (memories/api/views.py mixes them in)."""

    @extend_schema(
        request=None,
        responses={200: FeedbackOutputSerializer, **WRITE_ERRORS},
        summary="Confirm a memory still holds (+0.02 confidence, up to 0.95)",
    )
    @action(detail=True, methods=["post"])
    def confirm(self, request: Request, pk: str) -> Response:
        return Response(
            FeedbackOutputSerializer(feedback.memory_confirm(actor=request.user, memory_id=pk)).data
        )

    @extend_schema(
        request=MemoryReasonInputSerializer,
        responses={200: FeedbackOutputSerializer, **WRITE_ERRORS},
        summary="Say a memory is wrong: contested, −0.10 confidence, and a review item",
    )
    @action(detail=True, methods=["post"])
    def contradict(self, request: Request, pk: str) -> Response:
        data = MemoryReasonInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        result = feedback.memory_contradict(
            actor=request.user, memory_id=pk, reason=data.validated_data["reason"]
        )
        return Response(FeedbackOutputSerializer(result).data)

    @extend_schema(
        request=None,
        responses={200: FeedbackOutputSerializer, **ERRORS},
        summary="Say an answer used a memory (usage count, last used; slows its decay)",
    )
    @action(detail=True, methods=["post"])
    @reads_only_action
    def used(self, request: Request, pk: str) -> Response:
        return Response(FeedbackOutputSerializer(feedback.memory_used(actor=request.user, memory_id=pk)).data)


class ReviewViewSet(viewsets.ViewSet):
    lookup_value_regex = r"[0-9]+"
    pagination_class = StandardPagination

    @extend_schema(
        parameters=[ReviewListQuerySerializer],
        responses={200: ReviewItemOutputSerializer(many=True), **ERRORS},
        summary="The review queue: what needs a person (open items by default)",
    )
    def list(self, request: Request) -> Response:
        query = ReviewListQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        rows = selectors.review_list(actor=request.user, spaces=comma_separated(q.get("space")),
                                     kind=q.get("kind"), status=q["status"])
        return paginated(self, request, rows, ReviewItemOutputSerializer)

    @extend_schema(
        request=ReviewResolveInputSerializer,
        responses={200: ReviewItemOutputSerializer, **WRITE_ERRORS},
        summary="Resolve a review item (curators and owners)",
    )
    @action(detail=True, methods=["post"])
    def resolve(self, request: Request, pk: str) -> Response:
        data = ReviewResolveInputSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        item = feedback.review_resolve(
            actor=request.user,
            item_id=int(pk),
            action=data.validated_data["action"],
            note=data.validated_data["note"],
            fields=data.validated_data["fields"],
        )
        return Response(ReviewItemOutputSerializer(item).data)
