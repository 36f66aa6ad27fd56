"""A provider made slower on purpose, for tests and benchmarks of a slow or busy worker.

Chosen by SAM_EMBEDDING_SLOWDOWN (registry): each call waits, after the real model has
answered, (factor - 1) times as long as the model took, so the worker runs at 1/factor of
its speed with the vectors it would have computed anyway. Never set in production.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from memories.embeddings.base import EmbeddingProvider


class SlowedProvider:
    """Wraps a provider; `factor` 10 embeds at a tenth of its speed."""

    def __init__(self, inner: EmbeddingProvider, *, factor: float) -> None:
        self._inner = inner
        self.factor = factor
        self.name = inner.name
        self.dims = inner.dims
        self._warm = False

    def load(self) -> None:
        """Load the model and run it once, unslowed: a fresh process's first call is many
        times slower than the next ones, and slowing that tenfold would measure the cold start."""
        if self._warm:
            return
        loader = getattr(self._inner, "load", None)
        if loader is not None:
            loader()
        self._inner.embed(["warm-up"])
        self._warm = True

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.load()
        start = time.perf_counter()
        vectors = self._inner.embed(texts)
        time.sleep((self.factor - 1.0) * (time.perf_counter() - start))
        return vectors
