"""The memories app's models, one module per sub-area, gathered here for Django's registry
and for callers: the entry core (memories, passages, versions, counters, grants) in
`entries`; categories, entities and the graph, the review queue and chat imports in their
sub-packages (memories/categories, memories/entities, memories/lifecycle, memories/capture)."""

from memories.capture.models import ChatImport, ChatImportStatus, ImportedConversation, new_chat_import_id
from memories.categories.models import Category, MemoryCategory, ShownCategories
from memories.entities.models import Entity, EntityKind, MemoryEntity, MemoryRelation, RelationType
from memories.lifecycle.models import ReviewItem, ReviewKind, ReviewStatus
from memories.models.entries import (
    BUILTIN_KINDS,
    DecayType,
    EmbeddingStatus,
    Memory,
    MemoryGroupGrant,
    MemoryManager,
    MemoryPassage,
    MemoryQuerySet,
    MemoryStats,
    MemoryType,
    MemoryUserGrant,
    MemoryVersion,
    Priority,
    Reliability,
    SourceType,
    default_context_window,
    default_decay_policy,
    new_memory_id,
)

__all__ = [
    "BUILTIN_KINDS",
    "Category",
    "ChatImport",
    "ChatImportStatus",
    "DecayType",
    "EmbeddingStatus",
    "Entity",
    "EntityKind",
    "ImportedConversation",
    "Memory",
    "MemoryCategory",
    "MemoryEntity",
    "MemoryGroupGrant",
    "MemoryManager",
    "MemoryPassage",
    "MemoryQuerySet",
    "MemoryRelation",
    "MemoryStats",
    "MemoryType",
    "MemoryUserGrant",
    "MemoryVersion",
    "Priority",
    "RelationType",
    "Reliability",
    "ReviewItem",
    "ReviewKind",
    "ReviewStatus",
    "ShownCategories",
    "SourceType",
    "default_context_window",
    "default_decay_policy",
    "new_chat_import_id",
    "new_memory_id",
]
