"""Windows of a long memory's content, embedded on their own (issue: facts at the end of
long turns were lost in one vector for the whole text).

A memory of at least MIN_WORDS words gets windows of WINDOW words, each starting STRIDE
words after the last (so a sentence cut by one window is whole in the next), at most
MAX_WINDOWS of them. Recall searches their vectors too and scores a memory by its best
window (max-pooling), beside the vector of the whole.
"""

from __future__ import annotations

MIN_WORDS = 64
WINDOW = 48
STRIDE = 36
MAX_WINDOWS = 32


def windows(content: str) -> list[str]:
    words = content.split()
    if len(words) < MIN_WORDS:
        return []
    found = []
    for start in range(0, len(words), STRIDE):
        found.append(" ".join(words[start:start + WINDOW]))
        if start + WINDOW >= len(words) or len(found) == MAX_WINDOWS:
            break
    return found
