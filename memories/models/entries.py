"""Memories, their version history and their hot counters. Spaces are core's."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any, cast

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Func, Q
from django.db.models.functions import Coalesce
from django.db.models.lookups import LessThanOrEqual
from django.db.models.query import ModelIterable
from guardian.models import GroupObjectPermissionBase, UserObjectPermissionBase
from pgvector.django import HnswIndex, VectorField
from ulid import ULID

from core.models import Space
from core.sealing import SealedJSONField, SealedTextField
from governance.roles import NO_RESTRICTION
from memories import limits


def new_memory_id() -> str:
    """A stable, sortable id such as mem_01JD5Z8K3Q4W0S6T2X9B7C1N5M."""
    return f"mem_{ULID()}"


class MemoryType(models.TextChoices):
    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    PROCEDURAL = "procedural"


class Priority(models.TextChoices):
    CORE = "core"
    HIGH = "high"
    NORMAL = "normal"
    LOW = "low"


class Reliability(models.TextChoices):
    UNVERIFIED = "unverified"
    INFERRED = "inferred"
    CONFIRMED = "confirmed"
    CONTESTED = "contested"


class SourceType(models.TextChoices):
    USER = "user"
    SYSTEM = "system"
    IMPORT = "import"
    DERIVED = "derived"
    DOC = "doc"


class DecayType(models.TextChoices):
    EXPONENTIAL = "exponential"
    NONE = "none"


class EmbeddingStatus(models.TextChoices):
    PENDING = "pending"
    READY = "ready"
    FAILED = "failed"


# Built-in kinds. Installs add their own with SAM_EXTRA_KINDS (see memories.kinds).
BUILTIN_KINDS = (
    "fact", "preference", "decision", "solution", "pattern", "standard", "procedure",
    "gotcha", "topic", "style", "summary", "glossary", "task_state", "project_fact",
)


def default_context_window() -> dict[str, list[str]]:
    return {"applies_to": [], "excludes": []}


def default_decay_policy() -> dict[str, Any]:
    return {"type": DecayType.EXPONENTIAL.value, "half_life_days": 90, "min_confidence": 0.4}


class _PreparedIterable(ModelIterable):
    """Memories a batch at a time, each batch handed to the queryset's `prepare` before it is
    yielded: the whole result when the queryset is evaluated (a page, a get), a chunk at a
    time for iterator() over a server-side cursor."""

    def __iter__(self) -> Iterator[Memory]:
        prepare = cast(MemoryQuerySet, self.queryset)._prepare
        assert prepare is not None
        rows = super().__iter__()
        size = self.chunk_size if self.chunked_fetch else None
        while batch := list(islice(rows, size)):
            prepare(batch)
            yield from batch


class MemoryQuerySet(models.QuerySet["Memory"]):
    # Run on each batch of memories the queryset yields (prepared()); None: nothing to do.
    _prepare: Callable[[list[Memory]], object] | None = None

    def prepared(self, prepare: Callable[[list[Memory]], object]) -> MemoryQuerySet:
        """This queryset with `prepare` run on the memories it yields, one batch at a time,
        however it is filtered, sliced or read afterwards (values and counts are not memories
        and are left alone). memories.selectors hides what the reader may not see this way:
        one query a page, or a chunk of an export, instead of one a memory."""
        clone = self.all()
        clone._prepare = prepare
        clone._iterable_class = _PreparedIterable
        return clone

    def _clone(self) -> MemoryQuerySet:
        # Every filter, slice and values() is a clone, and Django copies only its own state:
        # a filtered or sliced copy must still prepare. (django-stubs leaves _clone out.)
        clone: MemoryQuerySet = super()._clone()  # type: ignore[misc]
        clone._prepare = self._prepare
        return clone

    def with_vectors(self) -> MemoryQuerySet:
        """Load the embedding and tsvector, which the default manager leaves out."""
        return self.defer(None)

    def active(self) -> MemoryQuerySet:
        return self.filter(archived=False)

    def archived(self) -> MemoryQuerySet:
        return self.filter(archived=True)

    def with_related(self) -> MemoryQuerySet:
        return self.select_related("space", "stats")


# mypy cannot type a from_queryset() call used as a base class (the plugin types only assignments).
class MemoryManager(models.Manager.from_queryset(MemoryQuerySet)):  # type: ignore[misc]
    """Leaves the vector and tsvector out of every query unless asked for.

    Decoding a 384-float vector costs ~2 ms a row, and no list, detail or edit needs it.
    Saving an instance loaded this way writes only the loaded fields, so an edit never
    rewrites the vector either.
    """

    def get_queryset(self) -> MemoryQuerySet:
        return super().get_queryset().defer("embedding", "search_vector")


def _cardinality(field: str) -> Func:
    return Func(F(field), function="cardinality", output_field=models.IntegerField())


class Memory(models.Model):
    """One remembered item: a fact, preference, decision, solution, procedure...

    Carries the SAM entry plus SAM's own fields (README.md, "The memory entry"). Hot,
    often-changing counters (confidence, access and usage counts, last used) live in
    MemoryStats so that recall and decay never rewrite this row, which carries the
    HNSW-indexed embedding.
    """

    id = models.CharField(primary_key=True, max_length=40, default=new_memory_id, editable=False)
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="memories")

    # Free text is sealed with the space's data key (governance.crypto); lengths and
    # counts are checked in memories.entry, since the database sees only ciphertext.
    title = SealedTextField()
    content = SealedTextField()
    summary = SealedTextField()
    canonical_phrases = SealedJSONField(default=list)
    # Keyed tokens of the canonical phrases, for the exact-phrase channel.
    phrase_tokens = ArrayField(models.CharField(max_length=32), default=list, blank=True,
                               editable=False)
    # Tags stay plaintext: filters, tag restrictions and the tag channel need them. SAM
    # never copies content words here: it suggests only tags the space already uses
    # (memories.enrichment.suggest_tags).
    tags = ArrayField(models.CharField(max_length=limits.TAG[1]), default=list, blank=True)

    memory_type = models.CharField(
        max_length=16, choices=MemoryType.choices, default=MemoryType.SEMANTIC
    )
    kind = models.CharField(max_length=40, default="fact")
    priority = models.CharField(max_length=8, choices=Priority.choices, default=Priority.NORMAL)
    reliability = models.CharField(
        max_length=16, choices=Reliability.choices, default=Reliability.UNVERIFIED
    )
    importance = models.FloatField(default=0.5)

    source_type = models.CharField(max_length=16, choices=SourceType.choices, default=SourceType.USER)
    # The source's reference and URI and the context window are free text, sealed like
    # the rest; nothing filters on them in SQL.
    source_ref = SealedTextField(default="api")
    source_uri = SealedTextField(null=True, blank=True)

    occurred_at = models.DateTimeField(null=True, blank=True)
    context_window = SealedJSONField(default=default_context_window)
    decay_policy = models.JSONField(default=default_decay_policy)
    metadata = SealedJSONField(default=dict, blank=True)
    training_examples = SealedJSONField(default=list, blank=True)

    # The lowest role rank (governance.roles.RANK) that may see this memory; 0 = anyone
    # who may read the space. Users granted memories.view_memory on it see it regardless.
    visibility_rank = models.PositiveSmallIntegerField(default=NO_RESTRICTION)

    archived = models.BooleanField(default=False)
    archived_at = models.DateTimeField(null=True, blank=True)
    archive_reason = SealedTextField(blank=True, default="")
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )

    version = models.PositiveIntegerField(default=1)
    content_hash = models.CharField(max_length=64)

    embedding = VectorField(dimensions=settings.SAM_EMBEDDING_DIMS, null=True, blank=True)
    embedding_model = models.CharField(max_length=200, blank=True, default="")
    embedding_status = models.CharField(
        max_length=8, choices=EmbeddingStatus.choices, default=EmbeddingStatus.PENDING
    )
    embedded_at = models.DateTimeField(null=True, blank=True)
    # Hash of the exact text last embedded; the task skips work when it still matches.
    embedding_input_hash = models.CharField(max_length=64, blank=True, default="")
    embedding_attempts = models.PositiveSmallIntegerField(default=0)
    embedding_error = models.CharField(max_length=500, blank=True, default="")

    search_vector = SearchVectorField(null=True, editable=False)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MemoryManager()

    class Meta:
        ordering = ["-updated_at", "id"]
        verbose_name_plural = "memories"
        indexes = [
            models.Index(fields=["space", "archived", "-updated_at"], name="memory_space_recent"),
            # A write looks up the same text in the space (memories.services: a duplicate
            # reinforces instead of adding a row); without it, a sequential scan per write.
            models.Index(fields=["space", "content_hash"], name="memory_space_content_hash",
                         condition=Q(archived=False)),
            models.Index(fields=["embedding_status"], name="memory_embedding_status",
                         condition=~Q(embedding_status="ready")),
            # Recall's time channel: what a space said within the time a question names.
            models.Index(F("space"), Coalesce("occurred_at", "created_at"), name="memory_space_said_at"),
            # fastupdate off: with Postgres's default pending list (up to 4 MB of entries
            # not yet merged, scanned linearly by every query) the exact-phrase channel took
            # 34 ms at 100k memories instead of 0.5 ms. Writes merge their entries at once.
            GinIndex(fields=["tags"], name="memory_tags_gin", fastupdate=False),
            GinIndex(fields=["phrase_tokens"], name="memory_phrase_tokens_gin", fastupdate=False),
            GinIndex(fields=["search_vector"], name="memory_search_gin", fastupdate=False),
            HnswIndex(
                name="memory_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=LessThanOrEqual(_cardinality("tags"), limits.TAGS_COUNT[1]),
                name="memory_tags_count",
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0) & Q(importance__lte=1), name="memory_importance_range"
            ),
            models.CheckConstraint(condition=Q(version__gte=1), name="memory_version_positive"),
            models.CheckConstraint(
                condition=Q(memory_type__in=MemoryType.values), name="memory_type_valid"
            ),
            models.CheckConstraint(
                condition=Q(priority__in=Priority.values), name="memory_priority_valid"
            ),
            models.CheckConstraint(
                condition=Q(reliability__in=Reliability.values), name="memory_reliability_valid"
            ),
            models.CheckConstraint(
                condition=Q(source_type__in=SourceType.values), name="memory_source_type_valid"
            ),
            models.CheckConstraint(
                condition=Q(embedding_status__in=EmbeddingStatus.values),
                name="memory_embedding_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(kind__regex=r"^[a-z][a-z0-9_]{1,39}$"), name="memory_kind_format"
            ),
        ]

    def __str__(self) -> str:
        # Not the title: Django writes str() in plaintext where sealing cannot reach it
        # (django_admin_log.object_repr, admin messages, logs).
        return f"{self.kind} {self.id}"

    def sealing_space_id(self) -> int:
        return self.space_id

    @property
    def source(self) -> dict[str, str | None]:
        return {"type": self.source_type, "ref": self.source_ref, "uri": self.source_uri}


class MemoryPassage(models.Model):
    """The vector of one window of a long memory's content (memories.embeddings.passages).

    One vector for a long text blurs what its end says; recall also searches these and
    scores a memory by its best window. No text here: the memory holds it, sealed.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="passages")
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField()
    embedding = VectorField(dimensions=settings.SAM_EMBEDDING_DIMS)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "position"], name="passage_unique")]
        indexes = [
            HnswIndex(name="passage_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]

    def __str__(self) -> str:
        return f"passage {self.position} of {self.memory_id}"


class MemoryStats(models.Model):
    """Counters that change on every recall or decay run, kept off the vector row.

    Updating them here is a cheap heap-only update of a narrow table, instead of a
    non-HOT update that re-inserts the memory's HNSW and GIN index entries.
    """

    memory = models.OneToOneField(
        Memory, primary_key=True, on_delete=models.CASCADE, related_name="stats"
    )
    # The memory's space (memories never change space): recall's recent channel finds a
    # space's recently recalled memories without walking every space's.
    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+", db_index=False)
    confidence = models.FloatField(default=0.75)
    usage_count = models.PositiveIntegerField(default=0)
    access_count = models.PositiveIntegerField(default=0)
    last_used_at = models.DateTimeField(null=True, blank=True)
    last_accessed_at = models.DateTimeField(null=True, blank=True)
    # When the decay pass last brought `confidence` up to date (memories.lifecycle.decay); until the
    # first pass, decay counts from the memory's last update.
    decayed_at = models.DateTimeField(null=True, blank=True)
    # The same text written again (a duplicate write reinforces instead of adding a row).
    reinforced_count = models.PositiveIntegerField(default=0)
    last_reinforced_at = models.DateTimeField(null=True, blank=True)
    # Written, not yet compared with what the space holds (the check needs the vector;
    # memories.lifecycle.write_checks finishes it once the embedding is stored).
    check_pending = models.BooleanField(default=False)

    class Meta:
        verbose_name_plural = "memory stats"
        indexes = [
            models.Index(fields=["-last_accessed_at"], name="memorystats_recent"),
            # In recall's order (most recent first, ties by id), so the recent channel stops
            # after its first rows even when many were recalled at the same moment.
            models.Index(fields=["space", "-last_accessed_at", "memory"], name="memorystats_space_recent",
                         condition=Q(last_accessed_at__isnull=False)),
        ]
        constraints = [
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1),
                name="memorystats_confidence_range",
            ),
        ]

    def __str__(self) -> str:
        return f"stats for {self.memory_id}"


class MemoryVersion(models.Model):
    """The state of a memory at one version, with the diff from the version before.

    Version 1 is the memory as created. `changes` is the changelog diff
    [{path, before, after, reason}] that led from version N-1 to N.
    """

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="versions")
    version = models.PositiveIntegerField()
    snapshot = SealedJSONField()
    changes = SealedJSONField(default=list)
    reason = SealedTextField(blank=True, default="")
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["memory", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["memory", "version"], name="memory_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id} v{self.version}"

    def sealing_space_id(self) -> int:
        return self.memory.space_id


class MemoryUserGrant(UserObjectPermissionBase):
    """A guardian object permission (memories.view_memory) on one memory, for one user.

    A real foreign key rather than guardian's generic (content type, text id) row, so the
    grant is deleted with its memory by every path that deletes memories (one by one,
    retention, forgetting, deleting the space). With a generic row the grant would
    outlive the memory and pass to a new memory created later with the same id.
    memories.restrictions.memory_grant_view writes these through guardian's shortcuts, which
    pick this table for memories. The table keeps its first name.
    """

    content_object = models.ForeignKey(Memory, on_delete=models.CASCADE,
                                       related_name="user_grants")

    class Meta(UserObjectPermissionBase.Meta):
        abstract = False
        db_table = "governance_memoryusergrant"

    def __str__(self) -> str:
        return f"permission {self.permission_id} on memory {self.content_object_id} for user {self.user_id}"


class MemoryGroupGrant(GroupObjectPermissionBase):
    """The group counterpart of MemoryUserGrant, deleted with its memory the same way."""

    content_object = models.ForeignKey(Memory, on_delete=models.CASCADE,
                                       related_name="group_grants")

    class Meta(GroupObjectPermissionBase.Meta):
        abstract = False
        db_table = "governance_memorygroupgrant"

    def __str__(self) -> str:
        return f"permission {self.permission_id} on memory {self.content_object_id} for group {self.group_id}"
