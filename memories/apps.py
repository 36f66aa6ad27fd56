from django.apps import AppConfig


class MemoriesConfig(AppConfig):
    name = "memories"
    verbose_name = "Memories"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django_q.signals import post_spawn

        from core import replica
        from governance import access, retention
        from governance.crypto import rotation
        from memories.embeddings.worker_threads import limit_worker_threads
        from memories.entities import linking as entities
        from memories.grants import granted_memory_ids, holds_any_grant
        from memories.models import (
            Entity,
            Memory,
            MemoryEntity,
            MemoryGroupGrant,
            MemoryStats,
            MemoryUserGrant,
            MemoryVersion,
        )
        from memories.search_index import reindex_resealed
        from memories.tasks import recover_on_worker_start

        # The gateway guards memories without naming them (docs/architecture.md).
        access.register_memories(model=Memory, versions=MemoryVersion, granted=granted_memory_ids,
                                 holds_any=holds_any_grant)
        # Read where rights are read (governance.apps): on the primary.
        replica.read_from_primary(MemoryUserGrant, bookkeeping=False)
        replica.read_from_primary(MemoryGroupGrant, bookkeeping=False)
        # Key rotation re-seals memories (and re-keys their search tokens) and versions.
        rotation.register_reseal(Memory, rotation.Reseal(after=reindex_resealed))
        rotation.register_reseal(MemoryVersion, rotation.Reseal(select_related=("memory",)))
        # And entities, whose lookup tokens follow the new key.
        rotation.register_reseal(Entity, rotation.Reseal(after=entities.rekey))
        # Receipt names of what deleting memories cascades to (the grants keep the names
        # they had when governance held them).
        retention.register_space_data(retention.SpaceData(count_names={
            Memory: "memories", MemoryVersion: "versions", MemoryStats: "memory_stats",
            MemoryUserGrant: "governance.MemoryUserGrant", MemoryGroupGrant: "governance.MemoryGroupGrant",
        }))
        # An entity's name goes with the last memory that names it, and with the space.
        retention.register_space_data(retention.SpaceData(
            with_memories=lambda space, ids, whole: (Entity.objects.filter(space=space).delete()[1] if whole
                                                     else entities.release(space.pk, ids)),
            everything=lambda space: Entity.objects.filter(space=space).delete()[1],
            count_names={Entity: "entities", MemoryEntity: "entity_links"},
        ))

        # Process set-up, not business logic: each worker sizes its BLAS pool as it starts.
        post_spawn.connect(limit_worker_threads, dispatch_uid="sam_worker_blas_threads")
        # Each new worker drains embeddings its predecessors' lost jobs left pending.
        post_spawn.connect(recover_on_worker_start, dispatch_uid="sam_worker_embedding_recovery")
