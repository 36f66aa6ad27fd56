"""How well the defusing step (governance.defuse) neutralises hostile stored text and leaves
ordinary text alone; writes bench/results/defuse_eval.json.

Corpora: tests/retrieval/data/hostile.jsonl (each case: id, category, text, the hazards it
carries) and tests/retrieval/data/ordinary.jsonl (ordinary memories, some tricky: RTL text,
emoji sequences, Persian ZWNJ, documentation URLs, code). A hostile case counts as
neutralised when every hazard it carries is (tests/retrieval/defuse_checks.py: the step
reports it and no trace of it is left in the output). An ordinary case counts as unchanged
when the output is its text byte for byte with no finding.

    python bench/defuse_eval.py [--blind] [--show]

Rules were first tuned on the "tune" half only (cases whose id ends in an odd number), and
the "held-out" half (even) measured then is kept in bench/results/defuse_eval_heldout.json
and reported as `held_out_before_tuning_on_it`; --show prints only the tune half unless
--all.

--blind records the first run on the corpora, before any rule was tuned on them, in
bench/results/defuse_eval_blind.json (refused if that file exists); every later run reports
it next to the current figures. --show prints the misses and the changed ordinary cases.
No database is needed. Cost is the mean time to defuse one memory over the two corpora.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from governance.defuse import defuse  # noqa: E402
from tests.retrieval.defuse_checks import hazard_left, load, neutralised  # noqa: E402

RESULTS = ROOT / "bench" / "results"
BLIND = RESULTS / "defuse_eval_blind.json"
# The run after tuning on the tune half, before any rule was read against the held-out half.
HELD_OUT = RESULTS / "defuse_eval_heldout.json"


def split(case: dict[str, Any]) -> str:
    digits = "".join(ch for ch in case["id"].rsplit("-", 1)[-1] if ch.isdigit()) or "0"
    return "tune" if int(digits) % 2 else "held_out"


def evaluate(show: bool = False, both: bool = False) -> dict[str, Any]:
    hostile, ordinary = load("hostile.jsonl"), load("ordinary.jsonl")
    by_split: dict[str, Counter[str]] = defaultdict(Counter)
    by_category: dict[str, Counter[str]] = defaultdict(Counter)
    by_hazard: dict[str, Counter[str]] = defaultdict(Counter)
    misses = []
    for case in hostile:
        output, findings = defuse(case["text"])
        missed = [h for h in case["hazards"] if not neutralised(h, output, findings)]
        for hazard in case["hazards"]:
            by_hazard[hazard]["cases"] += 1
            by_hazard[hazard]["neutralised"] += hazard not in missed
        by_category[case["category"]]["cases"] += 1
        by_category[case["category"]]["neutralised"] += not missed
        by_split["hostile_" + split(case)]["cases"] += 1
        by_split["hostile_" + split(case)]["neutralised"] += not missed
        if missed:
            misses.append({"id": case["id"], "missed": missed, "findings": findings,
                           "left": {h: hazard_left(h, output) for h in missed}})
            if show and (both or split(case) == "tune"):
                print(f"MISS {case['id']} {missed} findings={findings}\n"
                      f"  in:  {case['text']!r}\n  out: {output!r}")
    changed = []
    for case in ordinary:
        output, findings = defuse(case["text"])
        same = output == case["text"] and not findings
        by_split["ordinary_" + split(case)]["cases"] += 1
        by_split["ordinary_" + split(case)]["unchanged"] += same
        if not same:
            changed.append({"id": case["id"], "findings": findings, "tricky": bool(case.get("tricky"))})
            if show and (both or split(case) == "tune"):
                print(f"CHANGED {case['id']} {findings}\n  in:  {case['text']!r}\n  out: {output!r}")
    texts = [c["text"] for c in hostile + ordinary]
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for text in texts:
            defuse(text)
        rounds.append((time.perf_counter() - start) * 1000 / len(texts))
    return {
        "hostile": {"cases": len(hostile), "neutralised": sum(c["neutralised"] for c in by_category.values()),
                    "by_category": {k: dict(v) for k, v in sorted(by_category.items())},
                    "by_hazard": {k: dict(v) for k, v in sorted(by_hazard.items())},
                    "misses": misses},
        "ordinary": {"cases": len(ordinary), "unchanged": len(ordinary) - len(changed),
                     "tricky": sum(1 for c in ordinary if c.get("tricky")),
                     "tricky_unchanged": sum(1 for c in ordinary if c.get("tricky"))
                     - sum(1 for c in changed if c["tricky"]),
                     "changed": changed},
        "by_split": {k: dict(v) for k, v in sorted(by_split.items())},
        "cost_ms_per_memory": {"median_of_5": round(statistics.median(rounds), 3),
                               "mean_chars": round(statistics.mean(len(t) for t in texts))},
        "machine": platform.machine(), "python": platform.python_version(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--blind", action="store_true")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--all", action="store_true", help="with --show: both halves")
    args = parser.parse_args()
    result = evaluate(show=args.show, both=args.all)
    RESULTS.mkdir(exist_ok=True)
    if args.blind:
        if BLIND.exists():
            sys.exit(f"{BLIND} exists: the blind first pass is recorded once.")
        BLIND.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if BLIND.exists():
        blind = json.loads(BLIND.read_text(encoding="utf-8"))
        result["blind_first_pass"] = {
            "hostile_neutralised": blind["hostile"]["neutralised"],
            "hostile_cases": blind["hostile"]["cases"],
            "by_category": {k: v["neutralised"] for k, v in blind["hostile"]["by_category"].items()},
            "ordinary_unchanged": blind["ordinary"]["unchanged"],
            "ordinary_cases": blind["ordinary"]["cases"]}
    if HELD_OUT.exists():
        frozen = json.loads(HELD_OUT.read_text(encoding="utf-8"))["by_split"]
        result["held_out_before_tuning_on_it"] = {
            "hostile_neutralised": frozen["hostile_held_out"]["neutralised"],
            "hostile_cases": frozen["hostile_held_out"]["cases"],
            "ordinary_unchanged": frozen["ordinary_held_out"]["unchanged"],
            "ordinary_cases": frozen["ordinary_held_out"]["cases"]}
    (RESULTS / "defuse_eval.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n",
                                              encoding="utf-8")
    hostile, ordinary = result["hostile"], result["ordinary"]
    print("| category | cases | neutralised |\n|---|--:|--:|")
    for name, row in hostile["by_category"].items():
        print(f"| {name} | {row['cases']} | {row['neutralised']} |")
    print(f"| all | {hostile['cases']} | {hostile['neutralised']} |")
    print(f"\nordinary unchanged: {ordinary['unchanged']}/{ordinary['cases']} "
          f"(tricky {ordinary['tricky_unchanged']}/{ordinary['tricky']})")
    print(f"splits: {result['by_split']}")
    print(f"cost: {result['cost_ms_per_memory']['median_of_5']} ms per memory")
    if "blind_first_pass" in result:
        print(f"blind first pass: {result['blind_first_pass']}")


if __name__ == "__main__":
    main()
