"""Recall's caches (docs/recall.md, "Caches"): query embeddings by the text's hash, and the
generations of each space that a cached recall answer's key holds, so a committed write to
a space retires every answer that read it.
"""

from __future__ import annotations

import hashlib

import numpy as np
from django.core.cache import cache

# Looked up through the module at call time, so a test can swap the provider.
from memories.embeddings import registry as embeddings
from retrieval.models import RecallGeneration


def _space_generation_key(space_id: int) -> str:
    return f"sam:recall:gen:{space_id}"


def bump_space_generations(space_ids: list[int]) -> None:
    """Drop this process's cached recall results of these spaces (a write to them committed)."""
    for space_id in space_ids:
        key = _space_generation_key(space_id)
        if cache.add(key, 1, timeout=None) is False:
            try:
                cache.incr(key)
            except ValueError:
                cache.set(key, 1, timeout=None)


def generations(space_ids: tuple[int, ...]) -> tuple[str, ...]:
    """Per space, "<committed>.<local>": the two generations a cached answer must match.

    The committed one (retrieval.RecallGeneration, one indexed read) is raised by the
    database in every transaction that changes the space's memories, so a change
    committed by any process changes the key in all of them: the default cache is per
    process, and a generation kept in it would reach only the process that wrote. The
    local one is raised by spaces_changed when a write of this process commits (also
    for changes the test suite runs inside a transaction it never commits).
    """
    committed = dict(RecallGeneration.objects.filter(space_id__in=space_ids)
                     .values_list("space_id", "generation"))
    local = cache.get_many([_space_generation_key(i) for i in space_ids])
    return tuple(f"{committed.get(i, 0)}.{local.get(_space_generation_key(i), 0)}" for i in space_ids)


def embed_query(text: str) -> np.ndarray:
    """The query's embedding, cached by the text's hash (docs/recall.md, "Caches").

    Per process is fine here: a vector depends on the model and the text only, never on
    who asks or what they may see.
    """
    provider = embeddings.get_provider()
    digest = hashlib.sha256(f"{provider.name}|{text}".encode()).hexdigest()
    key = f"sam:qemb:{digest}"
    cached = cache.get(key)
    if cached is not None:
        return np.frombuffer(cached, dtype=np.float32)
    vector = provider.embed([text])[0].astype(np.float32)
    cache.set(key, vector.tobytes(), timeout=3600)
    return vector
