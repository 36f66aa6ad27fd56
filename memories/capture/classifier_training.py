"""How the learned extractor (memories.capture.learned) is trained: data, labels, fit, thresholds.

    .venv/bin/python bench/train_extractor.py            # writes memories/capture/data/clause_classifier.npz
    .venv/bin/python bench/train_extractor.py --check    # rebuild and compare with the shipped file

Training data: every sentence the user wrote in the labelled corpus (bench/data/capture_corpus/
*.jsonl: conversations from Claude Code, Cursor, ChatGPT and plain chat with the memories a
careful person would keep, each quoted) and in the rules' tuning sets (bench/data/
extraction_conversations.jsonl and extraction_blind{,2,3}.jsonl; blind4 and the held-out set
under bench/data/capture_heldout/ are never trained on). A sentence that carries a labelled
memory has that memory's kind; every other sentence is "none".

The model is a softmax layer over clause_features (the MiniLM embedding and the rules' cues),
fit by full-batch Adam with L2 from zeros: no randomness but the fold split, which a fixed seed
orders, so a rebuild gives the same weights (embeddings are rounded to 4 decimals so that BLAS
differences between machines do not reach them). Each kind's threshold is the lowest that keeps
its precision at TARGET_PRECISION on out-of-fold predictions (5 folds by conversation). The
figures go into the file's card and docs/capture-classifier.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
from django.conf import settings

from memories.capture import exchanges, learned
from memories.capture.clause_features import Sentence, features
from memories.capture.conversation import Conversation, Message

SEED = 20261128
FOLDS = 5
TARGET_PRECISION = 0.9
L2 = 0.1
STEPS = 500
LEARNING_RATE = 0.05
# A kind with fewer examples than this is not learnt: its sentences are left out of training.
MIN_EXAMPLES = 15
# Kinds the structural extractors find (a fix spans an error, an edit and a passing run; one
# sentence rarely holds it): their sentences are left out of training too.
STRUCTURAL = frozenset({"solution"})
DATA = Path(settings.BASE_DIR) / "bench" / "data"
CORPUS = DATA / "capture_corpus"
RULE_SETS = [DATA / name for name in
             ("extraction_conversations.jsonl", "extraction_blind.jsonl", "extraction_blind2.jsonl",
              "extraction_blind3.jsonl")]
RULE_KINDS = {"name": "fact", "role": "fact", "employer": "fact", "location": "fact", "languages": "fact",
              "preference": "preference", "dislike": "preference", "style": "style", "decision": "decision",
              "standard": "standard", "gotcha": "gotcha", "solution": "solution"}


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[\w'’-]+", text.lower()))


def _overlaps(quote: str, value: str, sentence: str) -> bool:
    """Whether `sentence` carries the labelled memory: its value is in it, and it is the quote
    or part of it (a quote may span sentences, a sentence may say more than the quote)."""
    q, s, v = _norm(quote), _norm(sentence), _norm(value)
    if not q or not s or (v and v not in s):
        return False
    if q in s or s in q:
        return True
    qw, sw = set(q.split()), set(s.split())
    return len(qw & sw) / max(1, min(len(qw), len(sw))) >= 0.6


def conversation_of(row: dict) -> tuple[Conversation, str]:
    """A labelled row as the readers would give it: user and assistant turns (tool traffic
    plays no part in what the user said)."""
    if "turns" in row:
        messages = [Message(role, text) for role, text in row["turns"]]
        source = "chat" if row.get("family") == "personal" else "claude_code"
    else:
        messages = [Message(m["role"], m.get("text") or "") for m in row["messages"]
                    if m["role"] in ("user", "assistant")]
        source = row.get("source", "chat")
    return Conversation(source=source, key=row["id"], origin="corpus", messages=messages), source


def labelled_sentences(row: dict) -> list[tuple[Sentence, str]]:
    conversation, source = conversation_of(row)
    split = exchanges.split(conversation)
    if "turns" in row:
        labels = [(RULE_KINDS.get(label["rule"], "none"), label["value"].lower(), None)
                  for label in row["expected"]]
    else:
        user_messages = {i for i, m in enumerate(row["messages"]) if m["role"] == "user"}
        labels = [(label["kind"], label["value"], label["quote"]) for label in row["expected"]
                  if label["message"] in user_messages]
    found = []
    for _, _, sentence in learned.sentences(split, source=source):
        kind = "none"
        for label_kind, value, quote in labels:
            if (quote is None and value in sentence.text.lower()) or (
                    quote is not None and _overlaps(quote, value, sentence.text)):
                kind = label_kind
                break
        found.append((sentence, kind))
    return found


def load_rows() -> list[dict]:
    """Every labelled conversation training reads, in a fixed order."""
    rows = []
    for path in sorted(CORPUS.glob("*.jsonl")) + RULE_SETS:
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def fit(x: np.ndarray, y: np.ndarray, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Softmax regression by full-batch Adam from zeros: the same data gives the same weights."""
    weights, bias = np.zeros((x.shape[1], classes)), np.zeros(classes)
    onehot = np.eye(classes)[y]
    moments = [np.zeros_like(weights), np.zeros_like(weights), np.zeros_like(bias), np.zeros_like(bias)]
    for step in range(1, STEPS + 1):
        logits = x @ weights + bias
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        error = (p - onehot) / len(y)
        grads = [x.T @ error + L2 * weights, error.sum(axis=0)]
        for index, (param, grad) in enumerate(zip((weights, bias), grads, strict=True)):
            m, v = moments[2 * index], moments[2 * index + 1]
            m[:] = 0.9 * m + 0.1 * grad
            v[:] = 0.999 * v + 0.001 * grad**2
            param -= LEARNING_RATE * (m / (1 - 0.9**step)) / (np.sqrt(v / (1 - 0.999**step)) + 1e-8)
    return weights, bias


def _model(x: np.ndarray, y: np.ndarray, classes: tuple[str, ...], thresholds: dict,
           card: dict) -> learned.Model:
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-6
    weights, bias = fit((x - mean) / scale, y, len(classes))
    return learned.Model(classes=classes, weights=np.round(weights, 6).astype(np.float32),
                         bias=np.round(bias, 6).astype(np.float32), mean=mean.astype(np.float32),
                         scale=scale.astype(np.float32), thresholds=thresholds, card=card)


def choose_thresholds(probabilities: np.ndarray, y: np.ndarray,
                      classes: tuple[str, ...]) -> tuple[dict, dict]:
    """Per kind, the lowest threshold on "this is a memory" (1 - P(none)) at which the sentences
    the model gives that kind are memories with out-of-fold precision TARGET_PRECISION. Which
    kind a memory is comes second: writers disagree on it too (a stack stated: a standard, or
    a decision?), while keeping a sentence that is no memory at all is the mistake to avoid."""
    thresholds, figures = {}, {}
    kind, memory = learned.kind_and_belief(probabilities, classes)
    is_memory = y != classes.index(learned.NONE)
    for k, name in enumerate(classes):
        if name == learned.NONE:
            continue
        given = kind == k
        chosen = 0.99
        for t in np.arange(0.3, 0.99, 0.025):
            said = given & (memory >= t)
            if said.sum() >= 3 and is_memory[said].mean() >= TARGET_PRECISION:
                chosen = float(round(t, 3))
                break
        said = given & (memory >= chosen)
        wanted = int((y == k).sum())
        figures[name] = {"threshold": chosen, "said": int(said.sum()), "expected": wanted,
                         "precision": round(float(is_memory[said].mean()), 3) if said.any() else None,
                         "kind_right": round(float((y[said] == k).mean()), 3) if said.any() else None,
                         "recall": round(float((said & (y == k)).sum() / wanted), 3) if wanted else None}
        thresholds[name] = chosen
    kept = np.zeros(len(y), dtype=bool)
    for k, name in enumerate(classes):
        if name != learned.NONE:
            kept |= (kind == k) & (memory >= thresholds[name])
    figures["all"] = {"said": int(kept.sum()), "expected": int(is_memory.sum()),
                      "precision": round(float(is_memory[kept].mean()), 3) if kept.any() else None,
                      "recall": round(float((kept & is_memory).sum() / is_memory.sum()), 3)}
    return thresholds, figures


def labelled(rows: list[dict]) -> tuple[list[tuple[Sentence, str]], list[int]]:
    """Every sentence of the rows with its kind, and the row each came from."""
    pairs, groups = [], []
    for number, row in enumerate(rows):
        for sentence, kind in labelled_sentences(row):
            pairs.append((sentence, kind))
            groups.append(number)
    return pairs, groups


def data_digest(pairs: list[tuple[Sentence, str]]) -> str:
    """What the model was trained on, as a hash: the shipped file's card names it."""
    return hashlib.sha256(json.dumps([[s.text, s.source, k] for s, k in pairs]).encode()).hexdigest()


def build(rows: list[dict] | None = None) -> learned.Model:
    """The model, from `rows` (default: the whole training data)."""
    rows = load_rows() if rows is None else rows
    pairs, groups = labelled(rows)
    counts = Counter(kind for _, kind in pairs)
    kept = [i for i, (_, kind) in enumerate(pairs) if counts[kind] >= MIN_EXAMPLES and kind not in STRUCTURAL]
    classes = tuple(sorted({pairs[i][1] for i in kept}, key=lambda k: (k != learned.NONE, k)))
    y = np.array([classes.index(pairs[i][1]) for i in kept])
    x = features([pairs[i][0] for i in kept]).astype(np.float64)
    group = np.array([groups[i] for i in kept])
    order = np.random.default_rng(SEED).permutation(len(rows))
    fold_of = np.empty(len(rows), dtype=int)
    fold_of[order] = np.arange(len(rows)) % FOLDS
    out_of_fold = np.zeros((len(y), len(classes)))
    for fold in range(FOLDS):
        test = fold_of[group] == fold
        part = _model(x[~test], y[~test], classes, {}, {})
        out_of_fold[test] = part.probabilities(x[test].astype(np.float32))
    thresholds, figures = choose_thresholds(out_of_fold, y, classes)
    digest = data_digest(pairs)
    card = {"seed": SEED, "conversations": len(rows), "sentences": len(kept),
            "by_kind": {classes[k]: int((y == k).sum()) for k in range(len(classes))},
            "left_out": {k: n for k, n in counts.items() if n < MIN_EXAMPLES or k in STRUCTURAL},
            "out_of_fold": figures, "data_sha256": digest, "target_precision": TARGET_PRECISION}
    return _model(x, y, classes, thresholds, card)
