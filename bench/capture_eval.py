"""Precision and recall of capture on labelled conversations, per source and per kind.

    .venv/bin/python bench/capture_eval.py                   # the held-out sets
    .venv/bin/python bench/capture_eval.py --set train       # the training corpus (a sanity check)

Sets (the format: bench/data/capture_corpus/README.md):

- `heldout`: bench/data/capture_heldout/*.jsonl, written by people who saw neither the rules,
  the classifier nor any other set. Scored as they were first scored: the figure to trust.
- `blind4`: the rules' last blind set (bench/data/extraction_blind4.jsonl, facts and coding
  sessions, never read to tune anything).
- `train`: the training corpus; the model has seen it, so it only shows the pipeline works.

Each conversation is read as its source's reader gives it (Claude Code sessions and ChatGPT
exports are written out in their real formats and read back, tool calls and results included;
bench/capture_formats.py), then every extractor runs (memories.capture.pipeline). A labelled
memory is found when a memory of the same kind holds its value; a memory no label asks for
counts against precision. Three columns: the rules alone, the learned extractor alone, and
everything together (what SAM keeps).

Writes bench/results/capture_eval_<set>.json and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter, defaultdict
from pathlib import Path

import capture_formats
from benchenv import ROOT

from memories.capture import classifier_training, exchanges, extract, learned, pipeline
from memories.capture.conversation import Conversation, Message

SETS = {
    "heldout": sorted((ROOT / "bench" / "data" / "capture_heldout").glob("*.jsonl")),
    "blind4": [ROOT / "bench" / "data" / "extraction_blind4.jsonl"],
    "train": sorted((ROOT / "bench" / "data" / "capture_corpus").glob("*.jsonl")),
}
# Rule names of the rules' tuning sets as kinds (the mapping training uses).
RULE_KINDS = classifier_training.RULE_KINDS


def labels_of(row: dict) -> list[dict]:
    if "turns" in row:
        return [{"kind": RULE_KINDS.get(label["rule"], label["rule"]), "value": label["value"]}
                for label in row["expected"]]
    return [{"kind": label["kind"], "value": label["value"]} for label in row["expected"]]


def read_back(row: dict) -> tuple[Conversation, str]:
    """The conversation as SAM's reader for its source gives it."""
    if "turns" in row:
        source = "chat" if row.get("family") == "personal" else "claude_code"
        return Conversation(source="jsonl", key=row["id"], origin="bench",
                            messages=[Message(role, text) for role, text in row["turns"]]), source
    return capture_formats.read_back(row), row["source"]


# Kinds people themselves label differently (a stack stated: a standard or a decision? "I'm
# vegetarian": a fact or a preference?), for the figures by group.
GROUPS = {"fact": "about the user", "preference": "about the user", "style": "about the user",
          "decision": "about the project", "standard": "about the project", "pattern": "about the project",
          "solution": "solution", "gotcha": "gotcha"}
GROUPED = False


def _kind(kind: str) -> str:
    return GROUPS.get(kind, kind) if GROUPED else kind


def _found(candidate: extract.Candidate, label: dict) -> bool:
    return _kind(candidate.kind) == _kind(label["kind"]) and label["value"].lower() in (
        candidate.content + " " + candidate.value).lower()


class Tally:
    def __init__(self) -> None:
        self.said: Counter[str] = Counter()
        self.right: Counter[str] = Counter()
        self.wanted: Counter[str] = Counter()
        self.covered: Counter[str] = Counter()
        self.repeats: Counter[str] = Counter()

    def add(self, group: str, found: list[extract.Candidate], labels: list[dict], mistakes: list, row_id: str,
            record: bool) -> None:
        open_labels = list(labels)
        # Kinds are tallied with the "all" group ("kind:x") and within a source ("source:y kind:x").
        kinds = group == "all"
        within = "" if kinds else f"{group} "
        for label in labels:
            self.wanted[group] += 1
            self.wanted[f"{within}kind:{label['kind']}"] += 1
        for candidate in found:
            matched = [label for label in open_labels if _found(candidate, label)]
            if not matched and any(_found(candidate, label) for label in labels):
                # A second memory of a fact already found: neither right nor wrong (the
                # write checks merge near duplicates), counted apart.
                self.repeats[group] += 1
                continue
            self.said[group] += 1
            self.said[f"{within}kind:{candidate.kind}"] += 1
            if not matched:
                if record:
                    mistakes.append({"conversation": row_id, "wrong": candidate.content[:200],
                                     "kind": candidate.kind, "rule": candidate.rule})
                continue
            self.right[group] += 1
            self.right[f"{within}kind:{candidate.kind}"] += 1
            for label in matched:
                open_labels.remove(label)
                self.covered[group] += 1
                self.covered[f"{within}kind:{label['kind']}"] += 1
        if record:
            mistakes += [{"conversation": row_id, "missed": label} for label in open_labels]

    def figures(self) -> dict[str, dict]:
        keys = sorted(set(self.said) | set(self.wanted))
        return {key: {"precision": round(self.right[key] / self.said[key], 3) if self.said[key] else None,
                      "recall": round(self.covered[key] / self.wanted[key], 3) if self.wanted[key] else None,
                      "proposed": self.said[key], "repeats": self.repeats[key],
                      "expected": self.wanted[key]} for key in keys}


def evaluate(paths: list[Path]) -> dict:
    tallies = {"rules": Tally(), "learned": Tally(), "sam": Tally()}
    mistakes: list[dict] = []
    rows = [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]
    for row in rows:
        conversation, source = read_back(row)
        split = exchanges.split(conversation)
        rules = extract.extract(split, profile=conversation.profile)
        model = learned.extract_learned(split, source=source, profile=conversation.profile)
        everything = pipeline.candidates(split, source=source, profile=conversation.profile)
        labels = labels_of(row)
        for name, found in (("rules", rules), ("learned", model), ("sam", everything)):
            for group in ("all", f"source:{source}"):
                tallies[name].add(group, found, labels, mistakes, row["id"],
                                  record=name == "sam" and group == "all")
    return {"conversations": len(rows), "expected": sum(len(labels_of(r)) for r in rows),
            "figures": {name: tally.figures() for name, tally in tallies.items()}, "mistakes": mistakes}


def table(result: dict) -> str:
    lines = ["| | rules P | rules R | learned P | learned R | SAM P | SAM R | expected |",
             "|---|---|---|---|---|---|---|---|"]
    figures = result["figures"]
    keys = sorted(figures["sam"], key=lambda k: (k != "all", k))
    for key in [k for k in keys if not (k.startswith("source:") and " " in k)]:
        cells = []
        for name in ("rules", "learned", "sam"):
            row = figures[name].get(key, {})
            cells += [str(row.get("precision", "–")), str(row.get("recall", "–"))]
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {figures['sam'][key]['expected']} |")
    return "\n".join(lines)


def by_source(result: dict) -> str:
    """SAM's precision / recall per source (rows) and kind (columns)."""
    figures = result["figures"]["sam"]
    kinds = sorted({k.split("kind:")[1] for k in figures if "kind:" in k})
    sources = sorted({k.split()[0] for k in figures if k.startswith("source:") and " " in k})
    lines = ["| P / R (n) | " + " | ".join(kinds) + " |", "|---|" + "---|" * len(kinds)]
    for source in sources:
        cells = []
        for kind in kinds:
            row = figures.get(f"{source} kind:{kind}")
            if not row or not (row["expected"] or row["proposed"]):
                cells.append("")
                continue
            precision = "–" if row["precision"] is None else f"{row['precision']:.2f}"
            recall = "–" if row["recall"] is None else f"{row['recall']:.2f}"
            cells.append(f"{precision} / {recall} ({row['expected']})")
        lines.append(f"| {source.split(':')[1]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=sorted(SETS), default="heldout")
    parser.add_argument("--grouped", action="store_true",
                        help="a memory of another kind of the same group counts (GROUPS)")
    args = parser.parse_args()
    global GROUPED
    GROUPED = args.grouped
    result = evaluate(SETS[args.set])
    result["model"] = (learned.model().card if learned.model() else None)
    out = ROOT / "bench" / "results" / f"capture_eval_{args.set}{'_grouped' if GROUPED else ''}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"{args.set}: {result['conversations']} conversations, {result['expected']} labelled memories")
    print(table(result))
    print()
    print(by_source(result))
    misses = defaultdict(int)
    for mistake in result["mistakes"]:
        misses["wrong" if "wrong" in mistake else "missed"] += 1
    print(dict(misses), f"-> {out.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
