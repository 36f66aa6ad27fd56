"""Rationales, highlights, conflicts and the fail-safe prefill (pure functions)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memories import enrichment, limits
from memories.normalize import clean_line
from retrieval.scoring import Signals

SIGNAL_PHRASES = {
    "semantic": "semantic match",
    "lexical": "keyword match",
    "exact": "an exact phrase hit",
    "tags": "matching tags",
    "recency": "recent use",
    "confidence": "high confidence",
    "importance": "high importance",
    "access": "frequent recall",
    "time": "being said in the time asked about",
    "graph": "a link to a strong match",
}


def strongest_signals(signals: Signals, weights: dict[str, float], n: int = 2) -> list[tuple[str, float]]:
    """The n signals that contributed most to the score (weight × value), ties by name."""
    contributions = [
        (name, weight * getattr(signals, name), getattr(signals, name))
        for name, weight in weights.items() if getattr(signals, name) > 0
    ]
    contributions.sort(key=lambda c: (-c[1], c[0]))
    return [(name, value) for name, _, value in contributions[:n]]


def rationale(signals: Signals, weights: dict[str, float], *, cue: str, conflict: bool,
              link: str = "") -> str:
    """One sentence: the strongest two signals with their values and one contextual cue
    (and, for a memory reached through the graph, which link)."""
    top = strongest_signals(signals, weights)
    if not top:
        reason = "Recalled as a close match"
    elif len(top) == 1:
        name, value = top[0]
        reason = f"Recalled for {SIGNAL_PHRASES[name]} ({value:.2f})"
    else:
        (a, va), (b, vb) = top
        reason = f"Recalled for {SIGNAL_PHRASES[a]} ({va:.2f}) and {SIGNAL_PHRASES[b]} ({vb:.2f})"
    sentence = f"{reason}, relevant to {cue}"
    if link:
        sentence += f"; {link}"
    if conflict:
        sentence += "; it conflicts with another recalled memory"
    return sentence + "."


_WORD = re.compile(r"[a-z0-9][a-z0-9+#._/-]*")
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def phrase_hits(text: str, phrases: Sequence[str]) -> list[str]:
    """Canonical phrases present in `text` as whole words (text already lowercased)."""
    padded = f" {' '.join(_WORD.findall(text))} "
    return [p for p in phrases if f" {' '.join(_WORD.findall(p))} " in padded]


def highlights(query_text: str, *, phrases: Sequence[str], content: str, limit: int = 2) -> list[str]:
    """Phrases hit by the query, then the content sentences sharing the most query words."""
    lowered = query_text.lower()
    out = [f"phrase: {p}" for p in phrase_hits(lowered, phrases)][:limit]
    terms = {w for w in _WORD.findall(lowered) if w not in enrichment.STOP_WORDS and len(w) > 2}
    if terms and len(out) < limit:
        scored = []
        for index, sentence in enumerate(_SENTENCE.split(clean_line(content))):
            overlap = len(terms & set(_WORD.findall(sentence.lower())))
            if overlap:
                scored.append((-overlap, index, sentence[:200]))
        out += [s for _, _, s in sorted(scored)[: limit - len(out)]]
    return out


# --- conflicts ------------------------------------------------------------------------

_POSITIVE = re.compile(r"^(?:prefer|use|always use|always|choose|pick|do|enable|keep)\s+(.+)$")
_NEGATIVE = re.compile(
    r"^(?:avoid|never use|never|don't use|do not use|don't|do not|stop using|disable|no)\s+(.+)$"
)


def _stances(phrases: Sequence[str]) -> tuple[set[str], set[str]]:
    """Content words of what a memory's phrases say to use, and to avoid."""
    pro: set[str] = set()
    con: set[str] = set()
    for phrase in phrases:
        for pattern, bucket in ((_NEGATIVE, con), (_POSITIVE, pro)):
            match = pattern.match(phrase)
            if match:
                words = {w for w in _WORD.findall(match.group(1)) if w not in enrichment.STOP_WORDS}
                # The head of the object is what the stance is about ("muddialog" in
                # "muddialog for alert pop-ups").
                head = next(iter(_WORD.findall(match.group(1))), "")
                bucket.update({head} & words or words)
                break
    return pro, con


@dataclass(frozen=True)
class Conflict:
    a: str
    b: str
    shared_tags: tuple[str, ...]
    subject: tuple[str, ...]


def find_conflicts(items: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> list[Conflict]:
    """Pairs of memories sharing a tag whose phrases point opposite ways (docs/recall.md, "Pipeline", step 6).

    `items` is [(id, tags, canonical_phrases)] in ranked order.
    """
    stances = [(mid, set(tags), *_stances(phrases)) for mid, tags, phrases in items]
    conflicts = []
    for i, (a, tags_a, pro_a, con_a) in enumerate(stances):
        for b, tags_b, pro_b, con_b in stances[i + 1:]:
            shared = tags_a & tags_b
            subject = (pro_a & con_b) | (con_a & pro_b)
            if shared and subject:
                conflicts.append(Conflict(a, b, tuple(sorted(shared)), tuple(sorted(subject))))
    return conflicts


# --- fail-safe ------------------------------------------------------------------------

def new_memory_prefill(*, conversation: Sequence[dict], active_task: str, query: str) -> dict:
    """A draft memory from the conversation and task, for create_new_memory_prefill."""
    user_turns = [clean_line(str(t.get("content", ""))) for t in conversation
                  if t.get("speaker", "user") == "user" and t.get("content")]
    source = clean_line(active_task) or clean_line(query) or (user_turns[-1] if user_turns else "")
    title = source[: limits.TITLE[1]].rsplit(" ", 1)[0] if len(source) > limits.TITLE[1] else source
    title = title or "New memory"
    draft_parts = [p for p in [clean_line(query), *user_turns[-3:], clean_line(active_task)] if p]
    content = " ".join(dict.fromkeys(draft_parts))[: limits.CONTENT[1]]
    if len(content) < limits.CONTENT[0]:
        content = f"{title}: describe what should be remembered."
    return {
        "title": title,
        "content": content,
        "tags": enrichment.suggest_tags(title=title, content=content),
        "canonical_phrases": enrichment.suggest_phrases(title=title, content=content),
    }
