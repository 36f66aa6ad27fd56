"""Cache invalidation on memory writes (the only thing signals do in SAM)."""

from retrieval.caches import bump_space_generations


def drop_cached_recalls(sender, *, space_ids: list[int], **kwargs) -> None:
    bump_space_generations(space_ids)
