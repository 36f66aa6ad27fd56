"""Work other apps do once memories are written and their text and vector are current.

A memory is *settled* when its embedding is stored (the embedding job calls `settled`) or,
for an edit that left the embedded text alone, when the edit commits. Apps above memories
register here in their `ready()` (retrieval runs a memory's training examples after an
edit) so memories never imports them. A callback that fails is logged and does not stop
the others: what it missed is caught up by the nightly jobs.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import transaction

logger = logging.getLogger(__name__)

Callback = Callable[[list[str]], None]
_SETTLED: list[Callback] = []


def on_settled(callback: Callback) -> Callback:
    if callback not in _SETTLED:
        _SETTLED.append(callback)
    return callback


def settled(memory_ids: list[str]) -> None:
    if not memory_ids:
        return
    for callback in list(_SETTLED):
        try:
            callback(list(memory_ids))
        except Exception:
            logger.exception("after-write work %s failed for %d memories",
                             getattr(callback, "__qualname__", callback), len(memory_ids))


def settle_on_commit(memory_ids: list[str]) -> None:
    ids = list(memory_ids)
    transaction.on_commit(lambda: settled(ids))
