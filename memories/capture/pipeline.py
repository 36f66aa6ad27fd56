"""Every extractor over one conversation, merged: what an import or a posted conversation keeps.

The rules and the structural extractors (memories.capture.extract: facts, decisions,
standards, gotchas, solutions) come first, being the most precise; then a configured model's
proposals (memories.capture.model_extractor); then the learned extractor
(memories.capture.learned) adds what it finds in sentences nothing else read. A learned
memory whose sentence a rule already took, or that says what a kept memory says, is left out:
one statement, one memory.
"""

from __future__ import annotations

import re

from memories.capture import extract, learned, model_extractor, rules
from memories.capture.exchanges import Exchange
from memories.lifecycle import dedupe

# How much two memories may share before the later one says nothing new (word Jaccard).
SAME_STATEMENT = 0.5
# How much of a sentence a rule's memory must hold for the sentence to need no memory of its own.
COVERED = 0.5
# A rule's finding in a sentence the learned model believes less than this to be a memory is
# left out: the rules read a pattern, the model the whole sentence ("never done a speech in
# my life" starts like a team standard).
VETO_BELOW = 0.3
USER_RULE_NAMES = frozenset(rule.name for rule in rules.USER_RULES)


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _said_already(candidate: extract.Candidate, kept: list[extract.Candidate]) -> bool:
    """Whether kept memories say what `candidate` says: the same words, or the same sentence
    read by rules that kept most of it. Rules that took one fact out of a long sentence ("The
    user speaks Portuguese." of "I speak Portuguese (native) and my Spanish is pretty fluent")
    leave the rest to the sentence's own memory."""
    words = _words(candidate.content)
    said = dedupe.content_words(dedupe.words(candidate.evidence))
    held: set[str] = set()
    for other in kept:
        theirs = _words(other.content)
        if len(words & theirs) / max(1, len(words | theirs)) > SAME_STATEMENT:
            return True
        same_sentence = other.exchange == candidate.exchange and candidate.evidence and other.evidence and (
            candidate.evidence in other.evidence or other.evidence in candidate.evidence)
        if same_sentence and other.rule.startswith(model_extractor.RULE_PREFIX):
            return True  # a model read the whole sentence and said what it holds
        if same_sentence:
            held |= dedupe.content_words(dedupe.words(other.content))
    return len(said & held) >= COVERED * len(said)


def merge(first: list[extract.Candidate], then: list[extract.Candidate]) -> list[extract.Candidate]:
    """`first`, then each of `then` that says something `first` (or an earlier one) does not."""
    kept = list(first)
    for candidate in then:
        if not _said_already(candidate, kept):
            kept.append(candidate)
    return kept


def _vetoed(candidate: extract.Candidate, beliefs: dict[tuple[int, str], float]) -> bool:
    """A rule's finding in a sentence the model is sure says nothing to keep."""
    if candidate.rule not in USER_RULE_NAMES:
        return False
    belief = beliefs.get((candidate.exchange, " ".join(candidate.evidence.split())))
    return belief is not None and belief < VETO_BELOW


def candidates(split: list[Exchange], *, source: str, profile: str = "", start: int = 0,
               model: list[extract.Candidate] | None = None) -> list[extract.Candidate]:
    """What every extractor finds in the exchanges from `start` on, merged: the rules and the
    structural extractors, then what a configured model proposed (`model`: it reads a sentence
    better than the classifier), then the classifier's."""
    readings = learned.read(split, source=source, profile=profile, start=start)
    beliefs = {(r.exchange, r.sentence): r.belief for r in readings}
    found = [c for c in extract.extract(split, profile=profile, start=start) if not _vetoed(c, beliefs)]
    if model:
        found = model_extractor.merge(found, model)
    return merge(found, learned.candidates(readings))
