"""Counting a text run by run gives the tokenizer's own count, whatever the text holds."""

from __future__ import annotations

import json
import random

import pytest

from retrieval.tokens import count_tokens, count_tokens_by_run

# Characters the normaliser and pre-tokenizer treat specially: accents and combining marks,
# CJK, Hangul (which decomposes), controls and format characters (removed), Unicode spaces
# and punctuation, emoji, an escaped quote and JSON's own marks.
ALPHABET = [*"abcXYZ019 _-.,:;\"'{}[]()<>/\\!?#@$%^&*+=|~`\t\n\r",
            "é", "É", "ñ", "ü", "e\u0301", "\u0301", "İ", "ß", "ﬁ", "中", "文", "한", "국", "ア", "ー",
            "\u200b", "\u00ad", "\x00", "\x07", "\ufffd", "\u2028", "\u00a0", "\u3000", "—", "…", "«",
            "¿", "😀", "👍🏽", "\\n", "\\\"", "Ⅻ", "½", "²"]


def random_text(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 120)))


def test_random_texts_count_the_same_as_the_tokenizer():
    rng = random.Random(20261206)
    for _ in range(400):
        text = random_text(rng)
        assert count_tokens_by_run(text) == count_tokens(text), repr(text)


def test_a_json_answer_counts_the_same_cold_and_warm():
    answer = {"query": "how do we store amounts of money?", "memories": [
        {"id": f"mem_01M96QPT831F306H7NWBTVT{n:03d}", "title": f"Rule {n} about caching",
         "summary": "Store money as Decimal — floats lost cents; «naïve» 中文 한국어 😀",
         "score": 0.4451 + n / 1000, "signals": {"semantic": 0.5386, "recency": 0.9998},
         "rationale": "Recalled for semantic match (0.54) and keyword match (0.30).", "conflict": None}
        for n in range(12)], "truncated": False, "total": 12}
    for ensure_ascii in (False, True):
        text = json.dumps(answer, ensure_ascii=ensure_ascii, separators=(",", ":"))
        assert count_tokens_by_run(text) == count_tokens(text)
        assert count_tokens_by_run(text) == count_tokens(text)  # the runs now remembered


@pytest.mark.parametrize("text", ["", " ", "a" * 150, "x" * 99 + "," + "y" * 101, "naïve\u0301café",
                                  "\x00,\x00"])
def test_edge_texts_count_the_same(text: str):
    assert count_tokens_by_run(text) == count_tokens(text)
