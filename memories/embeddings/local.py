"""The default provider: all-MiniLM-L6-v2 run in-process, without PyTorch."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np

from memories.embeddings.base import EmbeddingError


class LocalMiniLMProvider:
    """Loads the packaged model on first use (about a second) and keeps it."""

    name = "sentence-transformers/all-MiniLM-L6-v2"
    dims = 384

    def __init__(self, *, batch_size: int = 32) -> None:
        self._batch_size = batch_size
        self._encoder = None
        self._lock = threading.Lock()

    def _get_encoder(self):
        if self._encoder is None:
            with self._lock:
                if self._encoder is None:
                    from memories.embeddings.minilm import EmbeddingModelMissing, MiniLMEncoder

                    try:
                        self._encoder = MiniLMEncoder()
                    except EmbeddingModelMissing as exc:
                        raise EmbeddingError(str(exc)) from exc
        return self._encoder

    def load(self) -> None:
        """Load the model now (readiness checks; the first recall need not wait for it)."""
        self._get_encoder()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._get_encoder().encode(list(texts), batch_size=self._batch_size)
