"""The embedding provider interface."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np


class EmbeddingError(RuntimeError):
    """The provider could not embed now (unreachable, timed out, bad answer); retry later."""


class EmbeddingProvider(Protocol):
    """Turns texts into unit-length float32 vectors of `dims` components."""

    name: str
    dims: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Shape (len(texts), dims), rows L2-normalised, same order as `texts`."""
        ...


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)
