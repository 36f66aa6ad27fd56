"""Shapes of the memories API. Serializers check shape only; rules live in services."""

from __future__ import annotations

from typing import Any, cast

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.exceptions import flatten_errors
from core.api.fields import (
    BoundedJSONObjectField,
    EntryTextField,
    JSONInputSerializer,
    QueryParamsSerializer,
    RFC3339DateTimeField,
)
from core.api.parsers import MAX_JSON_DEPTH
from core.models import DuplicatePolicy, NearDuplicatePolicy, SpaceKind, SupersessionPolicy
from governance.modes import Mode, Retention
from governance.roles import role_for_rank
from memories import capture, limits
from memories.embeddings.registry import configured_model_name
from memories.entry import known_kinds
from memories.models import DecayType, EmbeddingStatus, Memory, MemoryType, Priority, Reliability, SourceType

# Largest metadata object a memory carries, as JSON text: room for any annotation,
# small enough that redaction, hashing and version diffs stay cheap.
METADATA_BYTES_MAX = 64_000
# The built-in kinds and SAM_EXTRA_KINDS: the service refuses any other, so the schema lists them.
MEMORY_KINDS = list(known_kinds())

# --- spaces ---------------------------------------------------------------------------

class TagCountSerializer(serializers.Serializer):
    tag = serializers.CharField()
    memories = serializers.IntegerField()


class SpaceStatsOutputSerializer(serializers.Serializer):
    space = serializers.CharField()
    memories = serializers.DictField(child=serializers.IntegerField(), help_text="{active, archived}")
    by_type = serializers.DictField(child=serializers.IntegerField(), help_text="Active memories by type")
    by_kind = serializers.DictField(child=serializers.IntegerField(), help_text="Active memories by kind")
    embedding = serializers.DictField(child=serializers.IntegerField(),
                                      help_text="Active memories by embedding status")
    top_tags = TagCountSerializer(many=True, help_text="The most used tags of active memories")


class SpaceOutputSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=SpaceKind.choices)
    description = serializers.CharField()
    mode = serializers.ChoiceField(choices=Mode.choices)
    retention_days = serializers.IntegerField(allow_null=True)
    prune_decayed = serializers.BooleanField()
    note_cap = serializers.IntegerField(allow_null=True)
    high_idle_days = serializers.IntegerField(allow_null=True)
    duplicate_policy = serializers.ChoiceField(choices=DuplicatePolicy.choices)
    near_duplicate_policy = serializers.ChoiceField(choices=NearDuplicatePolicy.choices)
    supersession_policy = serializers.ChoiceField(choices=SupersessionPolicy.choices)
    capture_sources = serializers.ListField(child=serializers.CharField())
    redaction_allowlist = serializers.ListField(child=serializers.CharField())
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class DeletionReceiptSerializer(serializers.Serializer):
    receipt_id = serializers.UUIDField()
    kind = serializers.ChoiceField(choices=["forget", "delete"])
    space = serializers.SlugField()
    requested_by = serializers.CharField()
    at = serializers.DateTimeField()
    deleted = serializers.DictField(child=serializers.IntegerField(),
                                    help_text="How many of each were removed")
    digest = serializers.CharField(help_text="SHA-256 of the receipt's other fields")


class SpaceSettingsSerializer(JSONInputSerializer):
    mode = serializers.ChoiceField(choices=Mode.choices, required=False)
    retention_days = serializers.ChoiceField(choices=Retention.choices, allow_null=True,
                                             required=False, help_text="7, 30, 90 or null (forever)")
    prune_decayed = serializers.BooleanField(
        required=False, help_text="Let the nightly job delete memories whose confidence fell below 0.1 "
                                  "(default false: they are only suggested for archiving)")
    note_cap = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=1_000_000,
        help_text="User spaces: active memories kept before the oldest low, then normal ones are "
                  "archived (null: SAM_USER_NOTE_CAP, 200 by default; 0: no cap)")
    high_idle_days = serializers.IntegerField(
        required=False, allow_null=True, min_value=0, max_value=3650,
        help_text="User spaces: a high-priority memory unused this many days before the space's last "
                  "activity is lowered to normal (null: SAM_USER_HIGH_IDLE_DAYS, 30 by default; 0: never)")
    duplicate_policy = serializers.ChoiceField(
        choices=DuplicatePolicy.choices, required=False,
        help_text="The same text written again: reinforce the stored memory (default) or keep both")
    near_duplicate_policy = serializers.ChoiceField(
        choices=NearDuplicatePolicy.choices, required=False,
        help_text="A near duplicate found once a new memory is embedded: review (default), merge into "
                  "the older, link as SIMILAR_TO, or keep")
    supersession_policy = serializers.ChoiceField(
        choices=SupersessionPolicy.choices, required=False,
        help_text="A newer memory contradicting an older one: auto (supersede when sure, else review; "
                  "default), review (always ask a curator) or off")
    capture_sources = serializers.ListField(
        child=serializers.ChoiceField(choices=capture.SOURCES), required=False,
        help_text="Chat histories this space accepts imports from (none by default; docs/capture.md)")
    redaction_allowlist = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=500, required=False
    )


class SpaceCreateInputSerializer(SpaceSettingsSerializer):
    slug = serializers.SlugField(max_length=80)
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=SpaceKind.choices, default=SpaceKind.PROJECT)
    description = serializers.CharField(required=False, allow_blank=True, default="")


class SpaceUpdateInputSerializer(SpaceSettingsSerializer):
    name = serializers.CharField(max_length=200, required=False)
    kind = serializers.ChoiceField(choices=SpaceKind.choices, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


# --- memory parts ---------------------------------------------------------------------

class MemorySourceSerializer(JSONInputSerializer):
    type = serializers.ChoiceField(choices=SourceType.choices, default=SourceType.USER)
    ref = serializers.CharField(max_length=limits.SOURCE_REF[1], default="api")
    uri = serializers.CharField(max_length=limits.SOURCE_URI_MAX, allow_null=True, allow_blank=True,
                                default=None)


class MemorySourceOutputSerializer(serializers.Serializer):
    type = serializers.CharField(source="source_type")
    ref = serializers.CharField(source="source_ref")
    uri = serializers.CharField(source="source_uri", allow_null=True)


class ContextWindowSerializer(JSONInputSerializer):
    applies_to = serializers.ListField(child=serializers.CharField(max_length=120), default=list,
                                       max_length=limits.CONTEXT_WINDOW_ITEMS_MAX)
    excludes = serializers.ListField(child=serializers.CharField(max_length=120), default=list,
                                     max_length=limits.CONTEXT_WINDOW_ITEMS_MAX)


class DecayPolicySerializer(JSONInputSerializer):
    type = serializers.ChoiceField(choices=DecayType.choices, default=DecayType.EXPONENTIAL)
    half_life_days = serializers.IntegerField(default=90, min_value=limits.HALF_LIFE_DAYS[0],
                                              max_value=limits.HALF_LIFE_DAYS[1])
    min_confidence = serializers.FloatField(default=0.4, min_value=0, max_value=1)


class TrainingExampleSerializer(JSONInputSerializer):
    id = EntryTextField(required=False, allow_blank=True, min_visible=limits.TRAINING_ID[0],
                        max_length=limits.TRAINING_ID[1])
    user = EntryTextField(min_visible=limits.TRAINING_USER[0], max_length=limits.TRAINING_USER[1])
    assistant = EntryTextField(min_visible=limits.TRAINING_ASSISTANT[0],
                               max_length=limits.TRAINING_ASSISTANT[1])
    assertions = serializers.ListField(child=serializers.CharField(), default=list,
                                       max_length=limits.TRAINING_ASSERTIONS_MAX)
    last_tested_at = RFC3339DateTimeField(allow_null=True, default=None)
    pass_rate = serializers.FloatField(default=0.0, min_value=0, max_value=1)


class EmbeddingRefSerializer(serializers.Serializer):
    model = serializers.SerializerMethodField()
    dims = serializers.SerializerMethodField()
    vector_ref = serializers.SerializerMethodField()
    status = serializers.ChoiceField(source="embedding_status", choices=EmbeddingStatus.choices)
    embedded_at = serializers.DateTimeField(allow_null=True)

    def get_model(self, memory: Memory) -> str:
        return memory.embedding_model or configured_model_name()

    def get_dims(self, memory: Memory) -> int:
        return settings.SAM_EMBEDDING_DIMS

    def get_vector_ref(self, memory: Memory) -> str:
        return f"vec://{memory.id}"


# --- memories -------------------------------------------------------------------------

class MemoryOutputSerializer(serializers.Serializer):
    """A memory as SAM JSON: validates against /api/v1/schema/memory-entry.json."""

    id = serializers.CharField()
    space = serializers.CharField(source="space.slug")
    title = serializers.CharField()
    content = serializers.CharField()
    summary = serializers.CharField()
    canonical_phrases = serializers.ListField(child=serializers.CharField())
    tags = serializers.ListField(child=serializers.CharField())
    memory_type = serializers.ChoiceField(choices=MemoryType.choices)
    kind = serializers.CharField()
    priority = serializers.ChoiceField(choices=Priority.choices)
    # A declared field (DRF's metaclass moves it off the class), not Field.source.
    source = MemorySourceOutputSerializer(source="*")  # type: ignore[assignment]
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    occurred_at = serializers.DateTimeField(allow_null=True)
    confidence_score = serializers.FloatField(source="stats.confidence")
    reliability = serializers.ChoiceField(choices=Reliability.choices)
    importance = serializers.FloatField()
    usage_count = serializers.IntegerField(source="stats.usage_count")
    access_count = serializers.IntegerField(source="stats.access_count")
    last_used_at = serializers.DateTimeField(source="stats.last_used_at", allow_null=True)
    last_accessed_at = serializers.DateTimeField(source="stats.last_accessed_at", allow_null=True)
    context_window = ContextWindowSerializer()
    training_examples = TrainingExampleSerializer(many=True)
    decay_policy = DecayPolicySerializer()
    archive_flag = serializers.BooleanField(source="archived")
    archived_at = serializers.DateTimeField(allow_null=True)
    restricted_to = serializers.SerializerMethodField(
        help_text="The lowest role that may see this memory; null when the space's readers may."
    )
    archive_reason = serializers.CharField()
    superseded_by = serializers.CharField(source="superseded_by_id", allow_null=True)
    version = serializers.IntegerField()
    content_hash = serializers.CharField()
    metadata = serializers.JSONField()
    embedding_status = serializers.ChoiceField(choices=EmbeddingStatus.choices)
    embeddings = EmbeddingRefSerializer(source="*")


    def get_restricted_to(self, memory: Memory) -> str | None:
        return role_for_rank(memory.visibility_rank)


class SecurityContextSerializer(JSONInputSerializer):
    allowlist = serializers.ListField(
        child=serializers.CharField(max_length=200), max_length=200, default=list,
        help_text="Usernames and account ids redaction keeps for this request",
    )


# SAM's entry limits (memories/limits.py); the service checks the minimums after normalising.
TITLE_RULES = {"min_visible": limits.TITLE[0], "max_length": limits.TITLE[1]}
CONTENT_RULES = {"min_visible": limits.CONTENT[0], "max_length": limits.CONTENT[1], "trim_whitespace": False}


class MemoryFieldsInputSerializer(JSONInputSerializer):
    """Every editable field, all optional; subclasses say what is required."""

    security_context = SecurityContextSerializer(required=False)

    title = EntryTextField(required=False, **TITLE_RULES)
    content = EntryTextField(required=False, **CONTENT_RULES)
    summary = EntryTextField(
        required=False, allow_blank=True, min_visible=limits.SUMMARY[0], max_length=limits.SUMMARY[1],
        help_text=f"{limits.SUMMARY[0]} to {limits.SUMMARY[1]} characters; empty: SAM suggests one.",
    )
    canonical_phrases = serializers.ListField(
        child=EntryTextField(allow_blank=True, min_visible=limits.PHRASE[0], max_length=limits.PHRASE[1]),
        required=False, max_length=limits.PHRASES_COUNT[1],
    )
    tags = serializers.ListField(
        child=EntryTextField(allow_blank=True, min_visible=limits.TAG[0], max_length=limits.TAG[1]),
        required=False, max_length=limits.TAGS_COUNT[1],
    )
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    kind = serializers.ChoiceField(choices=MEMORY_KINDS, required=False)

    priority = serializers.ChoiceField(choices=Priority.choices, required=False)
    reliability = serializers.ChoiceField(choices=Reliability.choices, required=False)
    importance = serializers.FloatField(required=False, min_value=0, max_value=1)
    confidence_score = serializers.FloatField(required=False, min_value=0, max_value=1)
    # A declared field (DRF's metaclass moves it off the class), not Field.source.
    source = MemorySourceSerializer(required=False)  # type: ignore[assignment]
    occurred_at = RFC3339DateTimeField(required=False, allow_null=True)
    context_window = ContextWindowSerializer(required=False)
    decay_policy = DecayPolicySerializer(required=False)
    metadata = BoundedJSONObjectField(
        required=False, max_bytes=METADATA_BYTES_MAX,
        help_text=f"Free-form JSON object: at most {METADATA_BYTES_MAX} bytes as JSON and "
                  f"{MAX_JSON_DEPTH} levels deep.",
    )
    # many=True hands max_length to the ListSerializer; the stubs' __init__ does not take it.
    training_examples = TrainingExampleSerializer(many=True, required=False,  # type: ignore[call-arg]
                                                  max_length=limits.TRAINING_EXAMPLES_MAX)
    superseded_by = serializers.CharField(required=False, allow_null=True, allow_blank=True)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # SAM_EXTRA_KINDS as it is now, not as it was when this module was imported.
        cast(serializers.ChoiceField, self.fields["kind"]).choices = known_kinds()


class MemoryCreateInputSerializer(MemoryFieldsInputSerializer):
    space = serializers.SlugField()
    id = serializers.RegexField(
        r"^[A-Za-z0-9_-]{8,40}$", required=False,
        help_text="Optional stable id (8-40 letters, digits, _ or -); SAM makes mem_<ulid> if absent.",
    )
    title = EntryTextField(**TITLE_RULES)
    content = EntryTextField(**CONTENT_RULES)


class MemoryUpdateInputSerializer(MemoryFieldsInputSerializer):
    version = serializers.IntegerField(
        min_value=1, help_text="The version this edit is based on; 409 when it is not current."
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500)


class MemoryWriteOutputSerializer(serializers.Serializer):
    """A write's answer: the memory, what changed, and which fields SAM suggested."""

    memory = MemoryOutputSerializer()
    changelog_diff = serializers.ListField(child=serializers.DictField())
    suggested_fields = serializers.ListField(child=serializers.CharField())
    redaction_report = serializers.ListField(
        child=serializers.DictField(), help_text="[{path, kind, pattern, start, end}] per redaction"
    )
    persisted = serializers.BooleanField(help_text="False when an incognito mode kept nothing")
    reinforced = serializers.BooleanField(
        required=False, default=False,
        help_text="True when the space held the same text already: that memory was reinforced "
                  "(confidence +0.02 up to 0.95) and is the one answered; nothing new was stored")


class MemoryReasonInputSerializer(JSONInputSerializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=500, default="")


class MemoryListQuerySerializer(QueryParamsSerializer):
    space = serializers.CharField(required=False, help_text="Space slug; comma-separated for several.")
    memory_type = serializers.ChoiceField(choices=MemoryType.choices, required=False)
    kind = serializers.CharField(required=False)
    tags = serializers.CharField(required=False, help_text="Comma-separated; a memory must carry all.")
    reliability = serializers.ChoiceField(choices=Reliability.choices, required=False)
    archived = serializers.ChoiceField(
        choices=["false", "true", "any"], required=False, default="false",
        help_text="false (default): active only; true: archived only; any: both.",
    )
    embedding_status = serializers.ChoiceField(choices=EmbeddingStatus.choices, required=False)
    text = serializers.CharField(required=False, max_length=500,
                                 help_text="Full-text query (web-search syntax) or a memory id.")
    updated_after = RFC3339DateTimeField(required=False)
    updated_before = RFC3339DateTimeField(required=False)
    category = serializers.SlugField(required=False, max_length=40,
                                     help_text="A category's name: the memories placed in it (spaces' "
                                               "categories: GET /api/v1/spaces/{slug}/categories/).")


class MemoryVersionOutputSerializer(serializers.Serializer):
    """One version. Pass context={"request": request}: links in its snapshot and diff to
    memories the reader may not see are blanked."""

    # The docstring is the schema's published description, kept as it was. The links are
    # blanked by memories.selectors (memory_version_list, memory_version_get), whoever
    # serializes the version; the context is no longer read.

    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    actor = serializers.CharField(source="actor.get_username", allow_null=True, default=None)
    reason = serializers.CharField()
    changes = serializers.ListField(child=serializers.DictField())
    snapshot = serializers.DictField()


class MemoryVersionRestoreInputSerializer(JSONInputSerializer):
    version = serializers.IntegerField(
        min_value=1, required=False,
        help_text="The memory's current version, to guard against concurrent edits (409).",
    )


@extend_schema_field(MemoryCreateInputSerializer(many=True))
class BulkItemsField(serializers.ListField):
    """Rows are checked one by one (MemoryBulkInputSerializer.validate: each gets its own
    errors), so the field takes any objects; the schema documents each row as a memory create
    body."""


class MemoryBulkInputSerializer(JSONInputSerializer):
    items = BulkItemsField(
        child=serializers.DictField(), min_length=1, max_length=settings.SAM_BULK_MAX_ITEMS,
        help_text=f"1 to {settings.SAM_BULK_MAX_ITEMS} memory objects in the create shape.",
    )
    atomic = serializers.BooleanField(
        default=False, help_text="When true, nothing is written unless every row is valid."
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Each row checked against the create shape on its own, so a bad row fails alone:
        `items` keeps every row in order (validated when valid), and `invalid` holds each
        invalid row's errors by its index."""
        items: list[dict[str, Any]] = []
        invalid: dict[int, dict[str, list[str]]] = {}
        # One serializer checks every row: building its fields (a deep copy of the declared
        # ones) costs more than checking a short row. Its fields keep no state between rows.
        row = MemoryCreateInputSerializer()
        for index, item in enumerate(attrs["items"]):
            try:
                items.append(row.run_validation(item))
            except serializers.ValidationError as exc:
                items.append(item)
                invalid[index] = flatten_errors(exc.detail)
        return {**attrs, "items": items, "invalid": invalid}


class MemoryBulkRowSerializer(serializers.Serializer):
    index = serializers.IntegerField()
    ok = serializers.BooleanField()
    id = serializers.CharField(required=False)
    persisted = serializers.BooleanField(required=False,
                                         help_text="False when an incognito mode kept nothing")
    reinforced = serializers.BooleanField(
        required=False, help_text="The same text was stored: `id` is that memory, reinforced")
    redaction_report = serializers.ListField(child=serializers.DictField(), required=False)
    # A declared field (DRF's metaclass moves it off the class), not Serializer.errors.
    errors = serializers.DictField(  # type: ignore[assignment]
        child=serializers.ListField(child=serializers.CharField()), required=False)


class MemoryBulkOutputSerializer(serializers.Serializer):
    created = serializers.IntegerField(help_text="Rows stored (new memories and reinforced ones)")
    reinforced = serializers.IntegerField(help_text="Of those, rows that reinforced a memory stored already")
    failed = serializers.IntegerField()
    atomic = serializers.BooleanField()
    results = MemoryBulkRowSerializer(many=True)


# --- curation -------------------------------------------------------------------------

class MemoryMergeInputSerializer(JSONInputSerializer):
    sources = serializers.ListField(child=serializers.CharField(max_length=64), min_length=1, max_length=50,
                                    help_text="Memories to merge into this one (same space).")
    version = serializers.IntegerField(min_value=1, help_text="The version of this memory you merge into.")
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)
    title = serializers.CharField(required=False)
    content = serializers.CharField(required=False)
    summary = serializers.CharField(required=False, allow_blank=True)


class MemoryMergeOutputSerializer(MemoryWriteOutputSerializer):
    merged = serializers.ListField(child=serializers.CharField(),
                                   help_text="The sources, now superseded by this memory and archived.")
    dropped = serializers.DictField(
        child=serializers.ListField(child=serializers.JSONField()),
        help_text="Phrases, tags and training examples over the entry's limits (kept in the sources).")


class MemoryConflictResolveInputSerializer(JSONInputSerializer):
    other = serializers.CharField(max_length=64,
                                  help_text="The other memory of the conflict (recall's conflict.with).")
    keep = serializers.ChoiceField(choices=["this", "other"])
    reason = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


class MemoryConflictResolveOutputSerializer(serializers.Serializer):
    kept = MemoryOutputSerializer()
    superseded = MemoryOutputSerializer()
