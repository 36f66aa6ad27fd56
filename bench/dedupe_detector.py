"""Precision and recall of the write-time duplicate and contradiction detector.

Scores memories.lifecycle.dedupe.judge on the labelled pairs in bench/data/dedupe_pairs.jsonl
(older statement, newer statement, label duplicate | contradiction | distinct), with the
cosine of the two texts under the local embedding model, as the embedding job sees them.
The `dev` split was used to write the rules; `heldout` was written first and scored once.

Two readings per class:
- acted: verdicts SAM acts on without a person (certain ones): precision matters most;
- flagged: every verdict of that class, certain or sent to review: recall matters most.

    .venv/bin/python bench/dedupe_detector.py

Writes bench/results/dedupe_detector.json and prints a Markdown table.
"""

from __future__ import annotations

import json
from collections import Counter

from benchenv import ROOT

from memories.embeddings import registry
from memories.lifecycle import dedupe, write_checks

PAIRS = ROOT / "bench" / "data" / "dedupe_pairs.jsonl"
CORPUS = ROOT / "bench" / "recall_corpus" / "memories.jsonl"
RESULTS = ROOT / "bench" / "results" / "dedupe_detector.json"
CLASSES = ("duplicate", "contradiction")


def _ratio(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 3) if denominator else None


def score(rows: list[dict]) -> dict:
    out: dict = {"pairs": len(rows), "labels": dict(Counter(r["label"] for r in rows))}
    for name in CLASSES:
        truth = [r["label"] == name for r in rows]
        for reading, test in (("acted", lambda v: v.certain), ("flagged", lambda v: True)):
            said = [r["verdict"].relation == name and test(r["verdict"]) for r in rows]
            hits = sum(1 for t, s in zip(truth, said, strict=True) if t and s)
            out[f"{name}_{reading}"] = {
                "precision": _ratio(hits, sum(said)), "recall": _ratio(hits, sum(truth)),
                "said": sum(said),
            }
    out["sent_to_review"] = sum(1 for r in rows if not r["verdict"].certain)
    out["mistakes"] = [
        {"older": r["older"], "newer": r["newer"], "label": r["label"], "said": r["verdict"].relation,
         "certain": r["verdict"].certain, "rule": r["verdict"].rule, **r["verdict"].features}
        for r in rows if r["verdict"].relation != r["label"]
    ]
    return out


def corpus_load(provider) -> dict:
    """What the checks would raise on a store of project knowledge with no labels: each
    memory of bench/recall_corpus against its five nearest older memories of its space
    (cosine ≥ 0.45), the first pair that is not distinct, as memories.lifecycle.write_checks does."""
    memories = [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]
    vectors = provider.embed([m["content"] for m in memories])
    found: Counter[str] = Counter()
    examples: dict[str, list] = {}
    for index, memory in enumerate(memories):
        earlier = [j for j in range(index) if memories[j]["space"] == memory["space"]]
        if not earlier:
            continue
        cosines = vectors[earlier] @ vectors[index]
        for position in cosines.argsort()[::-1][:write_checks.NEIGHBOURS]:
            cosine = float(cosines[position])
            if cosine < write_checks.MIN_COSINE:
                break
            older = memories[earlier[position]]
            verdict = dedupe.judge(older["content"], memory["content"], cosine=cosine)
            if verdict.relation != "distinct":
                key = f"{verdict.relation} {'sure' if verdict.certain else 'unsure'}: {verdict.rule}"
                found[key] += 1
                examples.setdefault(key, []).append([older["id"], memory["id"], round(cosine, 3)])
                break
    return {"memories": len(memories), "flagged": sum(found.values()), "by_rule": dict(found.most_common()),
            "examples": {k: v[:5] for k, v in examples.items()}}


def main() -> None:
    rows = [json.loads(line) for line in PAIRS.read_text().splitlines() if line.strip()]
    provider = registry.get_provider()
    older = provider.embed([r["older"] for r in rows])
    newer = provider.embed([r["newer"] for r in rows])
    for row, a, b in zip(rows, older, newer, strict=True):
        row["cosine"] = float(a @ b)
        row["verdict"] = dedupe.judge(row["older"], row["newer"], cosine=row["cosine"])
    results = {"model": registry.configured_model_name(),
               "splits": {split: score([r for r in rows if r["split"] == split])
                          for split in ("dev", "heldout")}}
    results["splits"]["all"] = score(rows)
    results["corpus_load"] = corpus_load(provider)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print("| split | pairs | duplicate acted P / R | duplicate flagged P / R | contradiction acted P / R "
          "| contradiction flagged P / R | to review |")
    print("|---|---|---|---|---|---|---|")
    for split, s in results["splits"].items():
        cells = [f"{s[f'{c}_{r}']['precision']} / {s[f'{c}_{r}']['recall']}"
                 for c in CLASSES for r in ("acted", "flagged")]
        print(f"| {split} | {s['pairs']} | " + " | ".join(cells) + f" | {s['sent_to_review']} |")
    load = results["corpus_load"]
    print(f"\nrecall corpus: {load['flagged']} of {load['memories']} memories flagged")
    for rule, count in load["by_rule"].items():
        print(f"  {count:4d}  {rule}")


if __name__ == "__main__":
    main()
