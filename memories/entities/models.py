"""What memories name (entities and their mentions) and the typed edges between memories."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.db.models import F, Q

from core.models import Space
from core.sealing import SealedJSONField, SealedTextField
from memories.models.entries import Memory


class EntityKind(models.TextChoices):
    PERSON = "person", "Person"
    PROJECT = "project", "Project"
    FILE = "file", "File"
    LIBRARY = "library", "Library"
    # A proper name whose kind no mention has shown yet.
    NAME = "name", "Name"


class Entity(models.Model):
    """Someone or something memories mention: a person, a project, a file, a library.

    Its name is sealed like the memories that name it; `key` finds it without the text: the
    keyed token of its normalised name (memories.entities.mentions.normalise) under the data
    key `key_id`, so the same name in two spaces, or after a rotation, never compares equal
    in a dump. `aliases` are the names merged into it by curators, sealed too, with their
    tokens in `alias_keys`.
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="entities")
    kind = models.CharField(max_length=10, choices=EntityKind.choices, default=EntityKind.NAME)
    name = SealedTextField()
    key = models.CharField(max_length=24)
    key_id = models.PositiveIntegerField()
    aliases = SealedJSONField(default=list, blank=True)
    alias_keys = ArrayField(models.CharField(max_length=24), default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "entities"
        constraints = [models.UniqueConstraint(fields=["space", "key"], name="entity_unique_key")]
        indexes = [GinIndex(name="entity_alias_keys", fields=["alias_keys"])]

    def __str__(self) -> str:
        return f"{self.kind} {self.pk}"

    def sealing_space_id(self) -> int:
        return self.space_id


class MemoryEntity(models.Model):
    """A memory mentions an entity (made when the memory settles, memories.entities.linking)."""

    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="entity_links")
    entity = models.ForeignKey(Entity, on_delete=models.CASCADE, related_name="links")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "entity"], name="memory_entity_unique")]
        # By entity, with the memory in the index: who mentions it, read from the index alone.
        indexes = [models.Index(fields=["entity", "memory"], name="memory_entity_by_entity")]

    def __str__(self) -> str:
        return f"{self.memory_id} mentions {self.entity_id}"


class RelationType(models.TextChoices):
    """Seed 002's typed relationships between memories (docs/lifecycle.md)."""

    RELATES_TO = "RELATES_TO"
    SIMILAR_TO = "SIMILAR_TO"
    LEADS_TO = "LEADS_TO"
    DERIVED_FROM = "DERIVED_FROM"
    SOLVES = "SOLVES"
    SUPERSEDES = "SUPERSEDES"
    OCCURRED_BEFORE = "OCCURRED_BEFORE"
    EVOLVED_INTO = "EVOLVED_INTO"
    CONTRADICTS = "CONTRADICTS"
    INVALIDATED_BY = "INVALIDATED_BY"
    PREFERS_OVER = "PREFERS_OVER"
    PART_OF = "PART_OF"
    DEPENDS_ON = "DEPENDS_ON"
    IMPLEMENTS = "IMPLEMENTS"
    EXEMPLIFIES = "EXEMPLIFIES"


class MemoryRelation(models.Model):
    """A typed, directed edge from one memory to another in the same space.

    `provenance` says which rule or person made it, from ids and numbers only (no memory
    text), so it stays in plaintext like review items.
    """

    space = models.ForeignKey(Space, on_delete=models.CASCADE, related_name="+")
    source = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="relations_out")
    target = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="relations_in")
    relation_type = models.CharField(max_length=20, choices=RelationType.choices)
    strength = models.FloatField(default=1.0)
    provenance = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "relation_type"], name="relation_unique"),
            models.CheckConstraint(condition=~Q(source=F("target")), name="relation_not_to_itself"),
            models.CheckConstraint(condition=Q(relation_type__in=RelationType.values),
                                   name="relation_type_valid"),
            models.CheckConstraint(condition=Q(strength__gte=0) & Q(strength__lte=1),
                                   name="relation_strength_range"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} {self.relation_type} {self.target_id}"
