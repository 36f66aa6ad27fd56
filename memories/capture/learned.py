"""The learned extractor: a classifier over SAM's own embedding model, sentence by sentence.

The hand-written rules (memories.capture.rules) are precise on the wording they know and miss
about half of what people say in words no rule foresaw: a proposal that stands, a labelled
team rule, a plain statement of the stack, a preference said in Spanish. This extractor reads
every sentence the user wrote, turns it into features (memories.capture.clause_features: the
MiniLM embedding and the rules' precision cues) and a softmax layer says which kind of memory
it is, or none. A kind is kept only above its own threshold, chosen when the model was
trained so that the kind's precision held on conversations the model had not seen.

The model ships with SAM (memories/capture/data/clause_classifier.npz, 17 KB, built
by bench/train_extractor.py with a fixed seed from the labelled corpus in
bench/data/capture_corpus/; docs/capture-classifier.md is its data card): nothing is
downloaded. Without the file, capture runs on the rules alone and says so in the log.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memories.capture import extract
from memories.capture.clause_features import Sentence, features
from memories.capture.exchanges import Exchange

logger = logging.getLogger(__name__)

MODEL_PATH = Path(__file__).parent / "data" / "clause_classifier.npz"
NONE = "none"
# The rule a learned memory names: learned:<kind>.
RULE_PREFIX = "learned:"
# A learned memory is never as sure as a rule's: it stays below what reviewers trust blindly.
MAX_CONFIDENCE = 0.8
# Sentences the model reads: long enough to say something, short enough to be one statement.
MIN_WORDS, MAX_WORDS = 3, 60

# kind -> (seed 003 category, priority, title, how the memory says it)
_SHAPES: dict[str, tuple[str, str, str, str]] = {
    "fact": ("fact", "high", "About the user", "The user said: {0}"),
    "preference": ("preference", "normal", "A preference of the user", "The user's preference: {0}"),
    "style": ("style", "high", "How the user wants answers", "How the user wants answers: {0}"),
    "decision": ("fact", "high", "A decision", "Decision: {0}"),
    "standard": ("fact", "high", "A standard", "Standard: {0}"),
    "gotcha": ("fact", "normal", "A gotcha", "Watch out: {0}"),
    "pattern": ("fact", "normal", "A pattern of the codebase", "Pattern: {0}"),
    "solution": ("fact", "high", "A fix", "Fix: {0}"),
}
# A sentence that opens on a condition states nothing yet ("if I moved to Paris I'd learn
# French", "when the build is green, tag it"): in the corpus none of 56 such sentences was a
# memory. ("What if we …" is a proposal, and read.)
_CONDITION = re.compile(r"^(?:(?:and|so|but|also|ok|okay),? )?"
                        r"(?:if|when|whenever|once|suppose|imagine|assuming)\b", re.IGNORECASE)
# A line pasted from a terminal or a log, not something the user said.
_PASTED = re.compile(r"^\s*(?:at |File \"|Traceback|\$ |>>>|[\w.]+Error\b|E\s{2,}|\d+ (?:passed|failed))|"
                     r"[{}<>=;|\\]{3,}")


@dataclass(frozen=True)
class Model:
    classes: tuple[str, ...]
    weights: np.ndarray  # features x classes
    bias: np.ndarray
    mean: np.ndarray
    scale: np.ndarray
    thresholds: dict[str, float]
    card: dict

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        logits = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        logits -= logits.max(axis=1, keepdims=True)
        exp = np.exp(logits)
        return exp / exp.sum(axis=1, keepdims=True)


def save(path: Path, model: Model) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        np.savez_compressed(handle, classes=np.array(model.classes), weights=model.weights, bias=model.bias,
                            mean=model.mean, scale=model.scale,
                            thresholds=np.array(json.dumps(model.thresholds, sort_keys=True)),
                            card=np.array(json.dumps(model.card, sort_keys=True)))


def load(path: Path) -> Model:
    with np.load(path, allow_pickle=False) as data:
        return Model(classes=tuple(str(c) for c in data["classes"]), weights=data["weights"],
                     bias=data["bias"],
                     mean=data["mean"], scale=data["scale"], thresholds=json.loads(str(data["thresholds"])),
                     card=json.loads(str(data["card"])))


@functools.cache
def model() -> Model | None:
    if not MODEL_PATH.exists():
        logger.warning("capture: %s is missing, sentences are read by the rules alone", MODEL_PATH)
        return None
    return load(MODEL_PATH)


def prose_of(text: str) -> str:
    """What the user wrote as prose: code blocks out, inline code kept without backticks."""
    return re.sub(r"```.*?```", " ", text, flags=re.DOTALL).replace("`", "")


def sentences(exchanges: list[Exchange], *, source: str, profile: str = "",
              start: int = 0) -> Iterator[tuple[int, str, Sentence]]:
    """(exchange index, the id of the user's turn, sentence) for each sentence the user wrote
    from `start` on (the profile's have no turn)."""
    if profile and start == 0:
        yield from ((0, "", s) for s in _of_message(profile, source=source, asked=False))
    for position, exchange in enumerate(exchanges):
        if exchange.index < start or not exchange.user.strip():
            continue
        before = exchanges[position - 1].assistant.rstrip() if position else ""
        turn = exchange.turns[0] if exchange.turns else ""
        for sentence in _of_message(exchange.user, source=source, asked=before.endswith("?")):
            yield exchange.index, turn, sentence


def _of_message(text: str, *, source: str, asked: bool) -> list[Sentence]:
    prose = prose_of(text)
    words = len(prose.split())
    found = []
    for number, piece in enumerate(extract.sentences(prose)):
        size = len(piece.split())
        if MIN_WORDS <= size <= MAX_WORDS and not _PASTED.search(piece) and not _CONDITION.match(piece):
            found.append(Sentence(text=piece, source=source, asked=asked, first=number == 0,
                                  message_words=words))
    return found


def kind_and_belief(probabilities: np.ndarray, classes: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, the likeliest kind of memory (never "none") and how sure the model is that
    the sentence is a memory at all (1 - P(none))."""
    none = classes.index(NONE)
    others = probabilities.copy()
    others[:, none] = -1.0
    return others.argmax(axis=1), 1.0 - probabilities[:, none]


def classify(found: list[Sentence], *, loaded: Model | None = None) -> list[tuple[str, float]]:
    """(kind or "none", belief that it is a memory) per sentence, each kind held to its threshold."""
    loaded = loaded or model()
    if loaded is None or not found:
        return [(NONE, 0.0)] * len(found)
    kinds, beliefs = kind_and_belief(loaded.probabilities(features(found)), loaded.classes)
    verdicts = []
    for k, belief in zip(kinds, beliefs, strict=True):
        kind = loaded.classes[int(k)]
        verdicts.append((kind if belief >= loaded.thresholds.get(kind, 1.0) else NONE, float(belief)))
    return verdicts


@dataclass(frozen=True)
class Reading:
    """What the model made of one sentence: the kind it would keep (or "none") and its belief
    that the sentence is a memory at all."""

    exchange: int
    sentence: str
    kind: str
    belief: float
    turn: str = ""  # the id of the user's turn it was said in, where the source has one


def read(exchanges: list[Exchange], *, source: str, profile: str = "", start: int = 0) -> list[Reading]:
    said = list(sentences(exchanges, source=source, profile=profile, start=start))
    verdicts = classify([sentence for _, _, sentence in said])
    return [Reading(exchange=index, sentence=" ".join(sentence.text.split()), kind=kind, belief=belief,
                    turn=turn)
            for (index, turn, sentence), (kind, belief) in zip(said, verdicts, strict=True)]


def candidates(readings: list[Reading]) -> list[extract.Candidate]:
    """The memories of the sentences the model keeps."""
    found = []
    for reading in readings:
        if reading.kind not in _SHAPES:
            continue
        category, priority, title, content = _SHAPES[reading.kind]
        said = reading.sentence
        found.append(extract.Candidate(
            kind=reading.kind, category=category, priority=priority,
            confidence=round(min(reading.belief, MAX_CONFIDENCE), 3), title=f"{title}: {said[:80]}",
            content=content.format(said.rstrip(".") + "."), evidence=said[:300], exchange=reading.exchange,
            turn=reading.turn,
            # No value apart from the sentence: redaction may take a name out of it and the
            # rest still stands (memories.capture.ingest keeps it if enough is left).
            rule=f"{RULE_PREFIX}{reading.kind}"))
    return found


def extract_learned(exchanges: list[Exchange], *, source: str, profile: str = "",
                    start: int = 0) -> list[extract.Candidate]:
    """The memories the classifier finds in the user's sentences (see the module's docstring)."""
    return candidates(read(exchanges, source=source, profile=profile, start=start))
