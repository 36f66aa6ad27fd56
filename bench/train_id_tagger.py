"""Train the identifier tagger (governance/redaction/id_tagger.py) and write its weights file.

Training data: the `dev` split of bench/redaction_corpus/cases.jsonl and the id tuning sets
(ids_tune*.jsonl); never the held-out splits or the blind sets. Every candidate the tagger would
see (id_tagger.candidates, on the normalised text the recognizers read) is an example: positive
when it overlaps an expected identifier, negative when it overlaps nothing expected (a candidate
overlapping a phone or an address is left out: it is another recognizer's). Logistic regression
by stochastic gradient descent in a fixed order (seeded), so a rebuild gives the same weights.

    .venv/bin/python bench/train_id_tagger.py            # writes governance/redaction/data/id_tagger.npz
    .venv/bin/python bench/train_id_tagger.py --check    # exit 1 unless a rebuild matches the shipped file
    .venv/bin/python bench/train_id_tagger.py --holdout ids_tune6.jsonl [--show]
        # train without one tuning set and report what the tagger adds to the rules on it
        # (--show: and list the ids still missed and the values wrongly tagged)
    .venv/bin/python bench/train_id_tagger.py --holdout all
        # the same for every tuning set in turn, with the totals
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from pathlib import Path

import numpy as np
from benchenv import ROOT

from governance.redaction import engine, id_tagger, redact_text
from governance.redaction.findings import Candidate, Finding
from governance.redaction.normalise import normalise
from governance.redaction.scan import Scan

CORPUS_DIR = ROOT / "bench" / "redaction_corpus"
TUNING = tuple(sorted(CORPUS_DIR.glob("ids_tune*.jsonl")))
EPOCHS = 20
LEARNING_RATE = 0.2
DECAY = 0.3  # the rate falls as 1 / (1 + DECAY × epoch)
L2 = 1e-5
SEED = 1


def load(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def training_cases(without: str | None = None) -> list[dict]:
    dev = [case for case in load(CORPUS_DIR / "cases.jsonl") if case["split"] == "dev"]
    return dev + [case for path in TUNING if path.name != without for case in load(path)]


Spans = list[tuple[int, int]]


def expected_in(normalised: str, case: dict, kind: str = "id") -> tuple[Spans, Spans]:
    """(spans of `kind`, other expected spans) in the normalised text."""
    ids, others = [], []
    for item in case["expected"]:
        value = normalise(item["value"]).text
        start = normalised.find(value)
        if start >= 0:
            (ids if item["kind"] == kind else others).append((start, start + len(value)))
    return ids, others


def _overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < b and a < end for a, b in spans)


def examples(cases: list[dict]) -> tuple[list[list[int]], list[int]]:
    rows, labels = [], []
    for case in cases:
        text = normalise(case["text"]).text
        ids, others = expected_in(text, case)
        phones = expected_in(text, case, kind="phone")[0]
        for start, end in id_tagger.candidates(text):
            positive = _overlaps(start, end, ids)
            if not positive and _overlaps(start, end, others) and not _overlaps(start, end, phones):
                continue
            rows.append(id_tagger.features(text, start, end))
            labels.append(int(positive))
    return rows, labels


def train(rows: list[list[int]], labels: list[int]) -> dict[int, float]:
    weights: dict[int, float] = {}
    order = list(range(len(rows)))
    shuffle = random.Random(SEED)
    for epoch in range(EPOCHS):
        shuffle.shuffle(order)
        rate = LEARNING_RATE / (1 + DECAY * epoch)
        for i in order:
            z = sum(weights.get(index, 0.0) for index in rows[i])
            error = 1 / (1 + math.exp(-max(-30.0, min(30.0, z)))) - labels[i]
            for index in rows[i]:
                current = weights.get(index, 0.0)
                weights[index] = current - rate * (error + L2 * current)
    return {index: value for index, value in weights.items() if value}


def rules_only(text: str) -> tuple[Finding, ...]:
    """The findings of every recognizer but the tagger."""
    saved = engine.FALLBACKS
    engine.FALLBACKS = ()
    try:
        return redact_text(text).findings
    finally:
        engine.FALLBACKS = saved


def added_on(cases: list[dict], weights: dict[int, float], *, show: bool = False) -> dict[str, object]:
    """What the tagger adds to the rules on `cases`: ids found, look-alikes and values damaged
    (with `show`, the ids still missed and the values wrongly tagged, to read)."""
    total = by_rules = by_both = damaged_lookalikes = stray = 0
    missed: list[str] = []
    lookalikes = 0
    for case in cases:
        text = normalise(case["text"]).text
        ids, others = expected_in(text, case)
        findings = rules_only(case["text"])
        rules = [(f.start, f.end) for f in findings if f.kind == "id"]
        # As the engine keeps them: where no other recognizer found anything, or over a phone
        # read by its shape alone (offsets of the original text and of the normalised one agree
        # for the ASCII texts most cases are).
        scan = Scan(text)
        proposed = [Candidate(f.kind, f.start, f.end, f.rule, 0) for f in findings]
        tagged = [span for span in id_tagger.tagged(scan, weights)
                  if not _overlaps(*span, [(f.start, f.end) for f in findings])
                  or id_tagger.phones_taken_over(scan, Candidate("id", *span, "id_tagger", 0), proposed)]
        wrong = [span for span in tagged if not _overlaps(*span, ids + others)]
        stray += len(wrong)
        if show:
            missed += [f"WRONG {text[a:b]!r} in {case['id']}: {text[max(0, a - 60):b + 30]!r}"
                       for a, b in wrong]
        if not case["expected"]:
            lookalikes += 1
            damaged_lookalikes += bool(wrong)
        for item in case["expected"]:
            if item["kind"] != "id":
                continue
            total += 1
            start = case["text"].index(item["value"])
            found = _overlaps(start, start + len(item["value"]), rules)
            value = normalise(item["value"]).text
            at = text.find(value)
            by_rules += found
            hit = found or (at >= 0 and _overlaps(at, at + len(value), tagged))
            by_both += hit
            if show and not hit:
                near = max(0, at - 70)
                missed.append(f"MISSED {item['value']!r} ({item['subkind']}, {item.get('country')}) in "
                              f"{case['id']}: {text[near:at + len(value) + 20]!r}")
    return {"ids": total, "found": by_both, "recall_rules": round(by_rules / max(1, total), 3),
            "recall_with_tagger": round(by_both / max(1, total), 3),
            "lookalikes_damaged_by_tagger": f"{damaged_lookalikes} of {lookalikes}",
            "lookalikes_damaged": damaged_lookalikes,
            "stray_tagger_findings": stray, **({"misses": missed} if show else {})}


def leave_each_out(*, show: bool = False) -> dict[str, object]:
    """Every tuning set scored by a tagger trained without it, and the totals over all of them."""
    per_set: dict[str, dict[str, object]] = {}
    for path in TUNING:
        weights = train(*examples(training_cases(path.name)))
        per_set[path.name] = added_on(load(path), weights, show=show)
    ids = sum(int(result["ids"]) for result in per_set.values())
    found = sum(int(result["found"]) for result in per_set.values())
    damaged = sum(int(result["lookalikes_damaged"]) for result in per_set.values())
    return {"sets": per_set, "ids": ids, "recall_with_tagger": round(found / ids, 3),
            "lookalikes_damaged_by_tagger": damaged,
            "stray_tagger_findings": sum(int(result["stray_tagger_findings"]) for result in per_set.values())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare with the shipped weights")
    parser.add_argument("--holdout", help="a tuning file's name to leave out and report on, or 'all'")
    parser.add_argument("--show", action="store_true", help="with --holdout: list what is still missed")
    args = parser.parse_args()
    if args.holdout == "all":
        print(json.dumps(leave_each_out(show=args.show), indent=2))
        return 0
    rows, labels = examples(training_cases(args.holdout))
    print(f"{len(rows)} examples, {sum(labels)} identifiers", file=sys.stderr)
    weights = train(rows, labels)
    if args.holdout:
        print(json.dumps(added_on(load(CORPUS_DIR / args.holdout), weights, show=args.show), indent=2))
        return 0
    if args.check:
        shipped = id_tagger.load(id_tagger.MODEL_PATH)
        keys = sorted(weights)
        same = keys == sorted(shipped) and np.allclose(
            [weights[k] for k in keys], [shipped[k] for k in keys], atol=1e-4)
        print("the same as the shipped model" if same else "DIFFERS from the shipped model")
        return 0 if same else 1
    id_tagger.MODEL_PATH.parent.mkdir(exist_ok=True)
    id_tagger.save(id_tagger.MODEL_PATH, weights)
    print(f"wrote {id_tagger.MODEL_PATH.relative_to(ROOT)}: {len(weights)} weights")
    return 0


if __name__ == "__main__":
    sys.exit(main())
