"""Is a new statement the same as an older one, or does it replace it? (pure; docs/lifecycle.md)

`judge(older, newer, cosine=...)` compares two memory texts and answers one of:

- `duplicate`: the same statement in other words (same polarity, no changed value);
- `contradiction`: the newer statement replaces the older: the same subject with the
  opposite polarity ("we deploy on Fridays" → "we no longer deploy on Fridays"), or a
  change announced in so many words ("moved to Berlin", "switched to uv") about what the
  older one said;
- `distinct`: both can hold (another subject, or more said about the same one).

Each verdict says whether it is `certain`. SAM acts on certain verdicts as the space's
policy says (supersede, merge, link) and sends uncertain ones to the review queue, or to
an optional model judge first (memories.lifecycle.judge). The rules read words only, so they work
on any text; the cosine of the two embeddings, when there is one, is a second opinion
on whether both speak of the same thing.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import snowballstemmer

Relation = Literal["duplicate", "contradiction", "distinct"]

# A Snowball stemmer keeps state while it stems: one per thread.
_STEMMERS = threading.local()
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.:/_]*[a-z0-9+#]|[a-z0-9]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][A-Za-z0-9+#]+")
_CONTRACTIONS = (
    (re.compile(r"\bwon['’]t\b"), "will not"),
    (re.compile(r"\bcan['’]t\b"), "can not"),
    (re.compile(r"\bshan['’]t\b"), "shall not"),
    (re.compile(r"n['’]t\b"), " not"),
    (re.compile(r"\bcannot\b"), "can not"),
    (re.compile(r"['’]s\b"), ""),
    (re.compile(r"(?<=[a-z])-(?=[a-z])"), " "),
)
# Words that turn a statement round; "no longer" counts once, and "anymore" only
# strengthens a negation already there ("not vegetarian anymore").
NEGATIONS = frozenset({
    "not", "no", "never", "none", "nobody", "nothing", "neither", "nor", "without", "stopped",
    "quit", "ceased", "abandoned", "banned", "forbidden", "disallowed", "disabled",
})
_NEGATION_PHRASES = ("no longer",)
# Words with which a newer statement says that something changed. Strong ones say it on
# their own; weak ones ("now") only where a value also changed.
STRONG_CHANGE_CUES = frozenset({
    "moved", "switched", "changed", "replaced", "migrated", "instead", "relocated", "renamed",
    "upgraded", "downgraded", "became", "promoted", "joined", "longer", "anymore", "stopped",
    "quit", "dropped", "retired",
})
WEAK_CHANGE_CUES = frozenset({"now", "nowadays", "currently"})
CHANGE_CUES = STRONG_CHANGE_CUES | WEAK_CHANGE_CUES
# Attributes that hold one value at a time: a new value replaces the old one.
SINGLE_VALUED = {
    "location": frozenset({"live", "lives", "living", "based", "moved", "relocated", "reside", "resides",
                           "located", "hosted", "region", "city", "country"}),
    "employer": frozenset({"works", "work", "working", "employer", "joined", "job", "jobs", "company"}),
    "name": frozenset({"name", "named", "called", "renamed"}),
    "role": frozenset({"role", "title", "position", "became", "promoted", "lead", "manager"}),
    "preference": frozenset({"prefers", "prefer", "preferred", "favourite", "favorite", "default"}),
}
STOP_WORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "to", "in", "on", "at", "for", "with", "by",
    "from", "as", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did",
    "has", "have", "had", "will", "would", "shall", "should", "can", "could", "may", "might",
    "must", "it", "its", "this", "that", "these", "those", "there", "here", "so", "very", "just",
    "also", "too", "all", "any", "some", "our", "we", "us", "i", "me", "my", "you", "your",
    "they", "them", "their", "he", "she", "his", "her", "user", "which", "who", "what",
    "when", "where", "how", "then", "than", "into", "onto", "over", "about", "up", "out", "only",
    "again", "still", "always", "every", "each", "use", "uses", "used", "using", "more", "month",
    "last", "week", "year", "ago", "recently",
})
# Past these, two texts are the same statement when nothing else tells them apart.
DUPLICATE_OVERLAP = 0.6
DUPLICATE_COSINE = 0.9
# Below this cosine, two texts are not about the same thing, whatever their words share.
SAME_SUBJECT_COSINE = 0.45
SAME_SUBJECT_OVERLAP = 0.5


@dataclass(frozen=True)
class Verdict:
    relation: Relation
    certain: bool
    # Which rule spoke, in a few words (stored on review items and in the audit note).
    rule: str
    features: dict[str, float] = field(default_factory=dict)


def words(text: str) -> list[str]:
    text = text.lower()
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return _WORD.findall(text)


def negated(tokens: list[str]) -> bool:
    """Whether the statement is a negative one: an odd number of negations."""
    joined = " ".join(tokens)
    count = sum(joined.count(phrase) for phrase in _NEGATION_PHRASES)
    count += sum(1 for t in tokens if t in NEGATIONS) - count  # "no" of "no longer" counted once
    return count % 2 == 1


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    # Snowball in pure Python costs ~10 µs a word; a store repeats its words all the time.
    stemmer = getattr(_STEMMERS, "english", None)
    if stemmer is None:
        stemmer = _STEMMERS.english = snowballstemmer.stemmer("english")
    return stemmer.stemWord(word)


def _ordered(tokens: list[str]) -> list[str]:
    """Content words in text order, "user" kept: where a statement names what it is about."""
    return [stem(t) for t in tokens if (t not in STOP_WORDS or t == "user") and t not in NEGATIONS
            and t not in CHANGE_CUES]


_IDENTIFIER = re.compile(r"[0-9._/:#-]")  # versions, paths, snake_case and dotted names


def _other_subject(old_tokens: list[str], new_tokens: list[str], *, strict: bool) -> bool:
    """Whether the two statements are about different things in one mould ("gateway pods
    request 500m CPU" / "subscriptions pods request 250m CPU", "error CHK-1009 means …" /
    "error CHK-1015 means …"): an identifier that only one has sits in the first third of
    either, or (`strict`, for contradictions) they start with another word. Paraphrases
    often start differently, so duplicates are not held to the first word."""
    old, new = _ordered(old_tokens), _ordered(new_tokens)
    if not old or not new:
        return False
    if strict and old[0] != new[0]:
        return True
    only = set(old) ^ set(new)
    for words in (old, new):
        head = words[: max(1, len(words) // 3)]
        if any(w in only and _IDENTIFIER.search(w) for w in head):
            return True
    return False


def content_words(tokens: list[str]) -> set[str]:
    return {stem(t) for t in tokens if t not in STOP_WORDS and t not in NEGATIONS and t not in CHANGE_CUES}


def _values(text: str, tokens: set[str]) -> set[str]:
    """Words that look like values: numbers, versions, times, names written with a capital."""
    capitalised = {stem(m.lower()) for m in _CAPITALISED.findall(text)}
    return {t for t in tokens if any(c.isdigit() for c in t) or t in capitalised}


def _families(tokens: list[str]) -> set[str]:
    present = set(tokens)
    return {name for name, cue_words in SINGLE_VALUED.items() if present & cue_words}


def normalised(text: str) -> str:
    """The text as compared for equality: lower case, words only."""
    return " ".join(words(text))


def judge(older: str, newer: str, *, cosine: float | None = None) -> Verdict:
    """How `newer` relates to `older` (see the module doc)."""
    old_tokens, new_tokens = words(older), words(newer)
    if old_tokens == new_tokens:
        return Verdict("duplicate", True, "same words")
    old_words, new_words = content_words(old_tokens), content_words(new_tokens)
    shared = old_words & new_words
    union = old_words | new_words
    jaccard = len(shared) / len(union) if union else 0.0
    # How much of the shorter statement the other one repeats.
    containment = len(shared) / min(len(old_words), len(new_words)) if old_words and new_words else 0.0
    features = {"jaccard": round(jaccard, 4), "containment": round(containment, 4)}
    if cosine is not None:
        features["cosine"] = round(cosine, 4)
    only_old, only_new = old_words - new_words, new_words - old_words
    new_set = set(new_tokens)
    strong_cue = bool(STRONG_CHANGE_CUES & new_set - set(old_tokens))
    weak_cue = bool(WEAK_CHANGE_CUES & new_set - set(old_tokens))
    family = _families(old_tokens) & _families(new_tokens)
    # The subject both speak of: a shared word, "user" included (a stop word elsewhere).
    shared_subject = bool(shared) or ("user" in old_tokens and "user" in new_tokens)
    same_subject = containment >= SAME_SUBJECT_OVERLAP or (cosine is not None and cosine >= 0.8) or (
        bool(family) and shared_subject)
    if not same_subject or (cosine is not None and cosine < SAME_SUBJECT_COSINE):
        return Verdict("distinct", True, "another subject", features)
    if _other_subject(old_tokens, new_tokens, strict=False):
        return Verdict("distinct", True, "same mould, another subject", features)
    # A contradiction needs one subject: the same first word, unless an attribute of one
    # value changed in so many words ("lives in Paris" / "moved to Berlin").
    other_subject = _other_subject(old_tokens, new_tokens, strict=True) and not (
        family and (strong_cue or weak_cue))
    # Most words shared: the same subject, however the sentence starts.
    reworded = jaccard >= 0.7
    flipped = negated(old_tokens) != negated(new_tokens)

    if flipped and (reworded or not other_subject):
        # The same words, turned round: the newer replaces the older.
        if containment >= 0.75 and len(only_new) <= 2:
            return Verdict("contradiction", True, "polarity flipped", features)
        return Verdict("contradiction", False, "polarity flipped, wording differs", features)
    if only_new and (strong_cue or (weak_cue and only_old)) and (reworded or not other_subject):
        # "moved to Berlin" after "lives in Paris", "now uv instead of pip-tools": a change
        # said in so many words.
        certain = (containment >= 0.5 or bool(family)) and (cosine is None or cosine >= 0.5)
        return Verdict("contradiction", certain, "change announced", features)
    changed_values = _values(older, only_old), _values(newer, only_new)
    if only_old and only_new and changed_values[0] and changed_values[1] and containment >= 0.6 \
            and not other_subject:
        # The same sentence with another number, time or name ("kept for 30 days" → "90 days"):
        # a change, or two facts that both hold ("note 1 is filed", "note 2 is filed"). Words
        # cannot tell which, so a person does.
        return Verdict("contradiction", False, "another value", features)
    if only_old and only_new and family and len(only_old) <= 3 and len(only_new) <= 3 and not other_subject:
        # A one-value attribute (where someone lives, works, what they prefer) given anew.
        return Verdict("contradiction", False, f"another {sorted(family)[0]}", features)
    if flipped or strong_cue:
        # Turned round, or a change announced, about something else: never a duplicate.
        return Verdict("distinct", True, "another subject, changed", features)
    close = cosine is None or cosine >= DUPLICATE_COSINE
    if not only_old or not only_new:
        # One says all the other says (and perhaps a little more).
        if jaccard >= DUPLICATE_OVERLAP or (cosine is not None and cosine >= DUPLICATE_COSINE):
            return Verdict("duplicate", True, "one restates the other", features)
        return Verdict("distinct", True, "adds to the other", features)
    if jaccard >= DUPLICATE_OVERLAP and close:
        return Verdict("duplicate", True, "nearly the same words", features)
    if cosine is not None and cosine >= DUPLICATE_COSINE and jaccard >= 0.3:
        return Verdict("duplicate", False, "nearly the same meaning", features)
    return Verdict("distinct", True, "different content", features)


# Kinds that hold one current answer per subject: a newer one replaces the older. (Facts about a
# person have judge()'s single-valued attributes: where someone lives, works, what they prefer.)
REPLACEABLE_KINDS = frozenset({"decision", "standard", "project_fact"})
# How a decision says it replaces one taken before ("switching the index to BRIN", "dropping
# Celery", "go back to npm"): whole words, so "migration", "dropdown" and "changelog" are not.
_REPLACING = re.compile(r"\b(?:switch(?:ed|es|ing)?|migrat(?:e|ed|es|ing)|"
                        r"mov(?:e|ed|es|ing) (?:to|over|away)|replac(?:e|ed|es|ing)|drop(?:ped|ping|s)?|"
                        r"go(?:ing)? back to|went back to|instead|no longer|any ?more|from now on|"
                        r"going forward|chang(?:ed|ing) (?:it |that |this )?to|revert(?:ed|ing|s)? to|"
                        r"abandon(?:ed|ing|s)?|ditch(?:ed|es|ing)?)\b", re.IGNORECASE)
# How close two decisions must be in meaning, and how many content words they must share,
# to be about one subject ("the index on orders.created_at"); measured on pairs of decisions
# from multi-session histories (docs/lifecycle.md).
REPLACED_COSINE = 0.6
REPLACED_SHARED_WORDS = 2


def replaced(older: str, newer: str, *, cosine: float) -> Verdict | None:
    """A decision, standard or fact that says it replaces an older one about the same subject:
    the newer names a change ("switching", "instead", "from now on") the older does not, and
    both speak of the same things. None when that is not said (judge() decides as before)."""
    if not _REPLACING.search(newer) or _REPLACING.search(older):
        # No change announced, or both announce one: which replaces which is not said.
        return None
    old_words = content_words(words(older))
    new_words = content_words(words(newer))
    shared = old_words & new_words
    features = {"shared": float(len(shared)), "cosine": round(cosine, 4)}
    if cosine >= REPLACED_COSINE and len(shared) >= REPLACED_SHARED_WORDS:
        return Verdict("contradiction", True, "replaced by a newer decision", features)
    return None
