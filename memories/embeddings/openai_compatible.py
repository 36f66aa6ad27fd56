"""A provider for any OpenAI-compatible /embeddings endpoint (hosted APIs, Ollama, vLLM)."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import numpy as np

from memories.embeddings.base import EmbeddingError, l2_normalise


class OpenAICompatibleProvider:
    """POSTs {"model", "input": [...]} to `<base_url>/embeddings`."""

    def __init__(self, *, base_url: str, model: str, dims: int, api_key: str = "",
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None) -> None:
        if not base_url:
            raise ValueError("SAM_EMBEDDING_URL is required for the openai provider.")
        if not model:
            raise ValueError("SAM_EMBEDDING_MODEL is required for the openai provider.")
        self.name = model
        self.dims = dims
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        try:
            response = self._client.post(
                "/embeddings", json={"model": self.name, "input": list(texts)}
            )
        except httpx.HTTPError as exc:
            raise EmbeddingError(f"embedding endpoint unreachable: {type(exc).__name__}") from exc
        if response.status_code != 200:
            raise EmbeddingError(f"embedding endpoint answered HTTP {response.status_code}")
        try:
            rows = sorted(response.json()["data"], key=lambda row: row["index"])
            vectors = np.asarray([row["embedding"] for row in rows], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError("embedding endpoint answered with an unexpected body") from exc
        if vectors.shape != (len(texts), self.dims):
            raise EmbeddingError(
                f"expected {len(texts)} vectors of {self.dims} dims, got shape {vectors.shape}"
            )
        return l2_normalise(vectors)
