"""Training examples a memory suggests for itself (pure; seed 000 §5, docs/lifecycle.md,
"Micro-training").

Deterministic from the memory's title, summary and canonical phrases:

- example 1: a request that holds one canonical phrase verbatim;
- example 2: a request in other words (the title, asked about);
- example 3, when the memory has more than six phrases: a request it must *not* answer,
  so a memory that comes back for everything is caught (its assertion is `not recalled`).

Assertions are words the expected answer must contain ("forbidden:word" must not); a test
run (retrieval.training) checks them against the expected answer and checks that recall
puts the memory in its top N for the request (or, for `not recalled`, that it does not).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

NOT_RECALLED = "not recalled"
# A request no memory of a project should answer.
UNRELATED_REQUEST = "Write a short poem about autumn leaves for a greeting card."
STOP_WORDS = frozenset(
    "a an and are as at be by do does for from how in is it of on or our should that the this to we what "
    "when where which who why with you your".split()
)


def _keywords(text: str, count: int) -> list[str]:
    words = [w for w in re.findall(r"[a-z0-9][a-z0-9_.-]{2,}", text.lower()) if w not in STOP_WORDS]
    return list(dict.fromkeys(words))[:count]


def _example(example_id: str, user: str, assistant: str, assertions: list[str]) -> dict[str, Any]:
    # Keep only assertions the expected answer really holds, so a generated example tests
    # recall, not its own wording.
    kept = [a for a in assertions if a == NOT_RECALLED or a in assistant.lower()]
    return {"id": example_id, "user": user, "assistant": assistant, "assertions": kept,
            "last_tested_at": None, "pass_rate": 0.0}


def suggest(*, title: str, summary: str, canonical_phrases: Sequence[str]) -> list[dict[str, Any]]:
    """Two or three examples in the memory entry's shape (id, user, assistant, assertions)."""
    expected = (summary or title).strip()
    phrase = canonical_phrases[0] if canonical_phrases else title.lower()
    examples = [
        _example("tr_auto_01", f"How should I handle {phrase} here?", expected,
                 _keywords(phrase, 2) or _keywords(expected, 1)),
        _example("tr_auto_02", f"Remind me what we agreed about {title.rstrip('.').lower()}.", expected,
                 _keywords(title, 2) or _keywords(expected, 1)),
    ]
    if len(canonical_phrases) > 6:
        examples.append(_example("tr_auto_03", UNRELATED_REQUEST, "Answer without this memory.",
                                 [NOT_RECALLED]))
    return examples
