"""What the learned extractor reads of one sentence: its meaning and the cues rules rely on.

A sentence the user wrote becomes one feature vector: SAM's own sentence embedding
(all-MiniLM-L6-v2, the local model, whatever provider stores the memories) followed by a few
cues the hand-written rules showed to matter for precision: a question, a hedge, the past,
someone else's words, a negation, a change of mind, who speaks (I or we), a labelled rule
("Team rule: …"), a value (a number, a version, a path), the assistant's question it answers,
the source, and which rule family, if any, fires on it. The embedding carries the wording no
rule foresaw; the cues keep what the rules got right. Training (bench/train_extractor.py) and
extraction (memories.capture.learned) build features here, so both read a sentence alike.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memories.capture import extract, rules
from memories.embeddings.base import EmbeddingProvider

SOURCES = ("claude_code", "cursor", "chatgpt", "chat")

_QUESTION_START = re.compile(r"^(?:what|how|why|where|when|which|who|is|are|am|can|could|would|should|do|"
                             r"does|"
                             r"did|any|anyone)\b", re.IGNORECASE)
_PAST = re.compile(r"\b(?:used to|back when|when i was|years ago|last (?:year|month|week)|i was|we were|"
                   r"i had|we had|previously|formerly)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|no|never|don'?t|doesn'?t|won'?t|can'?t|isn'?t|aren'?t|nothing|none|"
                       r"nobody)\b|n't\b", re.IGNORECASE)
_CHANGE = re.compile(r"\b(?:actually|instead|switch(?:ed|ing)?|moving to|moved to|from now on|going forward|"
                     r"no longer|any ?more|scratch that|changed? (?:my|our) mind|rather than|replac\w+|"
                     r"not \w+ but|from \S+ to \S+|change (?:it|that) to|make (?:it|that) )", re.IGNORECASE)
_I = re.compile(r"\b(?:i|i'm|im|i've|i'd|i'll|my|me|mine)\b", re.IGNORECASE)
_WE = re.compile(r"\b(?:we|we're|we've|we'll|our|us|team|everyone|everybody|the repo|this repo|"
                 r"the project|the codebase)\b", re.IGNORECASE)
_IMPERATIVE = re.compile(r"^(?:please |pls |plz )?(?:always|never|don'?t|do not|use|keep|make|avoid|stop|"
                         r"prefer|stick|put|write|answer|reply|respond|give|skip|no)\b", re.IGNORECASE)
_LABELLED = re.compile(r"^[A-Za-z][\w /'-]{1,30}:\s+\S")
_VALUE = re.compile(r"\d|`|\b\w+\.\w{1,4}\b|\b[A-Z][a-z]+[A-Z]\w*|--\w")
_GREETING = re.compile(r"^(?:hi|hey|hello|thanks|thank you|thx|ok|okay|cool|great|nice|perfect|lol|haha|"
                       r"sure|yes|yep|yeah|no|nope|morning|good (?:morning|evening))\b", re.IGNORECASE)
_REQUEST = re.compile(r"^(?:can you|could you|please|pls|help|show me|tell me|give me|write me|fix|explain|"
                      r"let me know|i need|i want you to|i'd like you to)\b", re.IGNORECASE)
# Common words of English: a sentence with few of them is likely in another language.
_ENGLISH = frozenset("the a an and or but to of in on for with is are be it this that i we you my our "
                     "not no do have has at as so if from by".split())
_FAMILIES = ("fact", "preference", "style", "decision", "standard", "gotcha")


@dataclass(frozen=True)
class Sentence:
    """One sentence of a user's message, with what a feature needs of its surroundings."""

    text: str
    source: str  # one of SOURCES; anything else reads as "chat"
    asked: bool = False  # the assistant's previous message ended with a question
    first: bool = False  # the first sentence of its message
    message_words: int = 0  # how long the whole message is


def _rule_families(text: str) -> list[float]:
    fired = {rule.kind if rule.kind in _FAMILIES else "fact" for rule in rules.USER_RULES
             if rule.pattern.search(text[:extract.CLAUSE_REACH])}
    return [1.0 if family in fired else 0.0 for family in _FAMILIES]


def cues(sentence: Sentence) -> list[float]:
    """The hand-made part of the features: each a 0/1 flag or a number near 0..1."""
    text = sentence.text.strip()
    words = re.findall(r"[\w'’-]+", text.lower())
    english = sum(word in _ENGLISH for word in words) / max(1, len(words))
    flags = [
        text.endswith("?"),
        bool(_QUESTION_START.match(text)),
        bool(extract.HEDGES.search(text)),
        bool(_PAST.search(text)),
        bool(extract.REPORTED.search(text)),
        bool(_NEGATION.search(text)),
        bool(_CHANGE.search(text)),
        bool(_I.search(text)),
        bool(_WE.search(text)),
        bool(_IMPERATIVE.match(text)),
        bool(_LABELLED.match(text)),
        bool(_VALUE.search(text)),
        bool(_GREETING.match(text)),
        bool(_REQUEST.match(text)),
        len(words) > 3 and english < 0.12,
        sentence.asked,
        sentence.first,
        sentence.message_words <= 8,
    ]
    source = sentence.source if sentence.source in SOURCES else "chat"
    return ([float(flag) for flag in flags] + [min(len(words), 60) / 60.0]
            + [1.0 if source == name else 0.0 for name in SOURCES] + _rule_families(text))


CUE_COUNT = len(cues(Sentence(text="x", source="chat")))


@functools.cache
def encoder() -> EmbeddingProvider:
    """The local MiniLM model: the configured provider when it is the local one (one copy of
    the weights per process), else a local one of its own (the weights ship with SAM)."""
    from memories.embeddings.local import LocalMiniLMProvider
    from memories.embeddings.registry import get_provider

    try:
        provider = get_provider()
    except Exception:  # a misconfigured remote provider must not stop capture's own model
        provider = None
    return provider if isinstance(provider, LocalMiniLMProvider) else LocalMiniLMProvider()


def features(sentences: Sequence[Sentence], *, embeddings: np.ndarray | None = None) -> np.ndarray:
    """One row per sentence: the embedding (rounded, so a rebuild on another BLAS is the same
    model) then the cues."""
    if not sentences:
        return np.zeros((0, 384 + CUE_COUNT), dtype=np.float32)
    if embeddings is None:
        embeddings = np.asarray(encoder().embed([s.text for s in sentences]), dtype=np.float32)
    hand = np.asarray([cues(s) for s in sentences], dtype=np.float32)
    return np.hstack([np.round(embeddings, 4), hand]).astype(np.float32)
