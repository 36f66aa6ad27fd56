"""Deterministic, extractive suggestions for summary, canonical phrases and tags.

No network and no model: a memory written offline gets the same suggestions every time.
Keyword extraction is a small RAKE (rapid automatic keyword extraction): candidate
phrases are runs of words between stop words and punctuation, scored by word degree
over frequency. The libraries that do this (rake-nltk, yake) either download corpora at
run time or pull a large dependency tree, so the forty lines below are cheaper to own.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection

from core.text import CAPITALISED_WORD
from memories import limits
from memories.normalize import clean_line

STOP_WORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each else even few
    for from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just let like may me might more most must my myself need no nor not
    now of off on once only or other ought our ours ourselves out over own per please same shall
    she should so some such than that the their theirs them themselves then there these they
    this those through to too under until up upon us use used uses using very via was we were
    what when where which while who whom why will with within without would you your yours
    yourself yourselves instead always never every get gets got make makes made want wants one
    two new old etc e.g i.e vs
    """.split()
)

# How many of the strongest content words are looked up among a space's known tags.
KNOWN_TAG_CANDIDATES = 40

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")
_WORD = re.compile(r"[a-z0-9][a-z0-9+#._/-]*[a-z0-9+#]|[a-z0-9]")
_SPLITTERS = re.compile(r"[,;:!?()\[\]{}\"“”]|\.(?:\s|$)|\s[-–—]\s|\n")


def suggest_summary(content: str, *, title: str = "") -> str:
    """The leading sentences of the content that fit the summary limit."""
    text = clean_line(content)
    max_len = limits.SUMMARY[1]
    summary = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{summary} {sentence}".strip()
        if len(candidate) > max_len:
            break
        summary = candidate
        if len(summary) >= 120:
            break
    if not summary:
        cut = text[: max_len - 1].rsplit(" ", 1)[0].rstrip(",;:")
        summary = f"{cut}…"
    if len(summary) < limits.SUMMARY[0]:
        summary = clean_line(f"{title}: {summary}") if title else summary
    return summary


def _candidate_phrases(text: str) -> list[list[str]]:
    phrases: list[list[str]] = []
    for chunk in _SPLITTERS.split(text.lower()):
        current: list[str] = []
        for word in _WORD.findall(chunk):
            if word in STOP_WORDS or word.isdigit():
                if current:
                    phrases.append(current)
                current = []
            else:
                current.append(word)
        if current:
            phrases.append(current)
    return [p for p in phrases if len(p) <= 5]


def keyphrases(text: str, *, limit: int) -> list[str]:
    """Top RAKE phrases, ties broken by first appearance (so the order is stable)."""
    candidates = _candidate_phrases(text)
    frequency: Counter[str] = Counter()
    degree: defaultdict[str, int] = defaultdict(int)
    for phrase in candidates:
        for word in phrase:
            frequency[word] += 1
            degree[word] += len(phrase)
    first_seen: dict[str, int] = {}
    scores: dict[str, float] = {}
    for index, phrase in enumerate(candidates):
        joined = " ".join(phrase)
        if joined in scores:
            continue
        first_seen[joined] = index
        scores[joined] = sum(degree[w] / frequency[w] for w in phrase)
    ranked = sorted(scores, key=lambda p: (-scores[p], first_seen[p]))
    return ranked[:limit]


def suggest_phrases(*, title: str, content: str, limit: int = 5) -> list[str]:
    """The lowercased title plus the content's strongest multi-word phrases.

    A canonical phrase found verbatim in a query is strong evidence (the exact signal), so
    only real phrases are suggested: two words or more that are not stop words, and not
    a name alone ("Nate", "Caroline Smith"), which any question about that person holds.
    """
    low, high = limits.PHRASE
    names = _proper_nouns(f"{title}. {content}")
    suggestions = []
    heading = clean_line(title).lower()[:high].strip()
    if _is_phrase(heading, names=frozenset()):
        suggestions.append(heading)
    for phrase in keyphrases(content, limit=limit * 3):
        if len(suggestions) >= limit:
            break
        if low <= len(phrase) <= high and phrase not in suggestions and _is_phrase(phrase, names=names):
            suggestions.append(phrase)
    suggestions = [s for s in suggestions if len(s) >= low]
    # A memory needs one phrase: with no real one ("Gina: ;)"), title and text together,
    # which no question repeats word for word.
    return suggestions or [clean_line(f"{title} {content}").lower()[:high].strip()]


def _is_phrase(phrase: str, *, names: frozenset[str]) -> bool:
    words = [w for w in _WORD.findall(phrase) if w not in STOP_WORDS and not w.isdigit()]
    return len(words) >= 2 and not all(w in names for w in words)


def _proper_nouns(text: str) -> frozenset[str]:
    """Words written capitalised where no sentence starts (names, mostly), and a speaker's
    name before a colon ("Nate: …"), lowercased."""
    found: set[str] = set()
    for sentence in re.split(r"(?<=[.!?:])\s+|\n+", text):
        words = re.findall(rf"\b{CAPITALISED_WORD}\b", sentence)
        if words and sentence.lstrip().startswith(words[0]):
            words = words[1:]
        found.update(word.lower() for word in words)
    speaker = re.match(rf"\s*({CAPITALISED_WORD}):", text)
    if speaker:
        found.add(speaker.group(1).lower())
    return frozenset(found)


def suggest_tags(*, title: str, content: str, limit: int = 5,
                 known: Callable[[list[str]], Collection[str]] | None = None) -> list[str]:
    """The most frequent content words, title words counting double.

    With `known`, only words it accepts (it gets the candidates, strongest first, and
    returns those that are tags already): tags are stored in plaintext, so what SAM
    stores must never copy the content's own words there (docs/security.md). Without it,
    for drafts that are shown and not stored, any word.
    """
    ranked = _ranked_tag_words(title=title, content=content)
    if known is None:
        return ranked[:limit]
    candidates = ranked[:KNOWN_TAG_CANDIDATES]
    accepted = set(known(candidates)) if candidates else set()
    return [word for word in candidates if word in accepted][:limit]


def tag_candidates(*, title: str, content: str) -> list[str]:
    """The words `suggest_tags` hands its `known` check, strongest first: a batch of
    writes looks them all up in one query (memories.services)."""
    return _ranked_tag_words(title=title, content=content)[:KNOWN_TAG_CANDIDATES]


def _ranked_tag_words(*, title: str, content: str) -> list[str]:
    low, high = limits.TAG
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    words = _WORD.findall(clean_line(title).lower()) * 2 + _WORD.findall(content.lower())
    for position, word in enumerate(words):
        word = word.strip("._/-")
        if word in STOP_WORDS or word.isdigit() or not (low + 1 <= len(word) <= high):
            continue
        counts[word] += 1
        first_seen.setdefault(word, position)
    return sorted(counts, key=lambda w: (-counts[w], first_seen[w]))
