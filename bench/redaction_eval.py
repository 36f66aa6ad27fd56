"""Redaction quality and speed on the labelled corpus in bench/redaction_corpus/cases.jsonl.

Every case is redacted with governance.redaction.redact_text (with the case's allowlist and
public figures, if it has them). A finding is a true positive when its kind matches an expected
value's kind and its span overlaps that value. Scores are per kind and per split: the rules were
tuned on "dev" only; "test" is the held-out half. Within "test", the cases whose ids contain
"fresh" were written after the rules were frozen and are also reported on their own ("fresh").
The cases whose ids contain "hardening" hold the shapes an outside probe found (and more of the
same kind); their "test" half is reported on its own too ("hardening").
"fresh2" and "fresh3" are splits of their own: batches each written before a round of rule
changes. "fresh2" was read in the third round, so "fresh3" is the honest held-out figure;
"held-out" is "test", "fresh2" and "fresh3" together.
"ids-tune" (bench/redaction_corpus/ids_tune.jsonl) holds national ids, passports, IBANs, tax,
customer and account numbers of many countries in running text, and look-alikes of them, written
by someone who never saw the rules; the id rules were tuned on it. Its expected ids carry a
"subkind" and a "country", and the eval reports recall and precision per subkind.
"ids-tune2" (bench/redaction_corpus/ids_tune2.jsonl) is a second set of the same kinds, written
independently and more varied (casual chat, forms, tables, far labels, many languages). It was
scored unchanged first (a held-out figure for the first round of id rules), then the second
round was tuned on it.
"ids-tune3" (bench/redaction_corpus/ids_tune3.jsonl) is a third set of the same kinds, written
independently again and weighted towards passports, tax, customer and account numbers; it was
scored unchanged first, then the third round was tuned on it.
"ids-tune4" (bench/redaction_corpus/ids_tune4.jsonl) is a fifth set, written independently again
(50 countries, voice transcripts, far labels); it was scored unchanged first, then the fourth round
was tuned on it. "ids-tune5" is a sixth, weighted towards hard layouts; the fifth round was tuned on it.
"ids-tune6" is a seventh, weighted towards less tested regions and pasted forms; the sixth round
was tuned on it. "ids-tune7" (written like the blind sets) and "ids-tune8" (weighted towards
everyday text full of numbers that are not identifiers) were scored unchanged first and are
training data of the identifier tagger (bench/train_id_tagger.py), as all the tuning sets are;
so are "ids-tune9" to "ids-tune12" (chat, pasted documents, less covered regions, unlabelled
customer and account numbers) and "ids-tune13" to "ids-tune16" (labels in non-Latin scripts,
everyday services' customer numbers, transcripts and OCR, a broad set) and "ids-tune17" to
"ids-tune20" (lists and tables, languages no earlier set had shown, messy chat, a broad set), each
scored unread first (results/redaction_<set>_before.json). Every ids_tune*.jsonl file in the
corpus folder is a split of its own.
Look-alike cases (ids "lookalike-…") expect no finding at all; any finding there is a false
positive, counted by look-alike category.

    .venv/bin/python bench/redaction_eval.py [--show SPLIT]   (dev, test, …, ids-tune3, ids-tune4, all)
    .venv/bin/python bench/redaction_eval.py --blind [PATH ...]

--show prints the misses and false positives of a split. No database is needed. Writes
bench/results/redaction.json and prints Markdown tables.

--blind scores held-out files (default bench/redaction_corpus/ids_blind.jsonl to ids_blind7.jsonl,
each written independently of the rules and never read) and prints and writes
(bench/results/redaction_<file>.json) aggregate figures only: per kind, per id subkind and per
look-alike category. It never prints a text or a value, so the sets stay blind to whoever runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from governance.redaction import KINDS, Finding, redact_text  # noqa: E402

CORPUS_DIR = ROOT / "bench" / "redaction_corpus"


def _set_number(path: Path) -> int:
    return int(path.stem.removeprefix("ids_tune") or 1)


# Every labelled file but the blind ones: the corpus and the id tuning sets, in their order.
TUNING_FILES = tuple(sorted(CORPUS_DIR.glob("ids_tune*.jsonl"), key=_set_number))
CORPORA = (CORPUS_DIR / "cases.jsonl", *TUNING_FILES)
TUNING_SPLITS = tuple(path.stem.replace("_", "-") for path in TUNING_FILES)
# The blind files, each scored into its own results file.
BLINDS = (CORPUS_DIR / "ids_blind.jsonl", CORPUS_DIR / "ids_blind2.jsonl", CORPUS_DIR / "ids_blind3.jsonl",
          CORPUS_DIR / "ids_blind4.jsonl", CORPUS_DIR / "ids_blind5.jsonl",
          CORPUS_DIR / "ids_blind6.jsonl", CORPUS_DIR / "ids_blind7.jsonl")
RESULTS = ROOT / "bench" / "results" / "redaction.json"
SPLITS = ("dev", "test", "fresh2", "fresh3", *TUNING_SPLITS)
# "fresh": the part of "test" written after the rules were first frozen; "hardening": the part of
# "test" that holds the shapes an outside probe found (written before the rules were changed);
# "held-out": "test", "fresh2" and "fresh3" together (the look-alike target counts over all three)
GROUPS = ("dev", "test", "fresh", "hardening", "fresh2", "fresh3", "held-out", *TUNING_SPLITS)
SUBKINDS = ("national_id", "passport", "iban", "tax_number", "customer_number", "account_number")
PARTS_OF_TEST = ("fresh", "hardening")
LOOKALIKE = "lookalike-"


def in_group(case: dict, group: str) -> bool:
    if group == "held-out":
        return case["split"] in ("test", "fresh2", "fresh3")
    if group in PARTS_OF_TEST:
        # "fresh2" ids also contain "fresh": only "test" cases belong to the parts of "test"
        return case["split"] == "test" and group in case["id"]
    return case["split"] == group


def load_cases(paths: tuple[Path, ...] = CORPORA) -> list[dict]:
    cases = [json.loads(line) for path in paths if path.exists()
             for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    keys = [case_key(case) for case in cases]
    if len(set(keys)) != len(keys):
        raise SystemExit("case ids must be unique within a split")
    return cases


def case_key(case: dict) -> str:
    """Ids are unique within a split; files written apart reuse look-alike ids across splits."""
    return f"{case['split']}/{case['id']}"


def expected_spans(case: dict) -> list[tuple[str, int, int]]:
    spans = []
    for item in case["expected"]:
        start = case["text"].index(item["value"])
        spans.append((item["kind"], start, start + len(item["value"])))
    return spans


def overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    return a_start < b_end and b_start < a_end


def redact_case(case: dict) -> tuple[Finding, ...]:
    return redact_text(case["text"], allowlist=case.get("allowlist", ()),
                       public_figures=case.get("public_figures", ())).findings


def score(cases: list[dict], findings_by_id: dict[str, tuple[Finding, ...]]) -> dict:
    """Per-kind precision/recall/F1, the share of expected values hidden by a finding of any kind,
    and the share of expected characters covered."""
    counts = {k: defaultdict(int) for k in KINDS}
    for case in cases:
        expected = expected_spans(case)
        findings = findings_by_id[case_key(case)]
        for kind, start, end in expected:
            c = counts[kind]
            c["expected"] += 1
            c["found"] += any(f.kind == kind and overlaps(f.start, f.end, start, end) for f in findings)
            c["hidden"] += any(overlaps(f.start, f.end, start, end) for f in findings)
            covered = sum(1 for i in range(start, end) if any(f.start <= i < f.end for f in findings))
            c["chars"] += end - start
            c["chars_covered"] += covered
        for f in findings:
            c = counts[f.kind]
            c["predicted"] += 1
            c["correct"] += any(kind == f.kind and overlaps(f.start, f.end, s, e) for kind, s, e in expected)
    table = {}
    for kind, c in counts.items():
        precision = c["correct"] / c["predicted"] if c["predicted"] else 1.0
        recall = c["found"] / c["expected"] if c["expected"] else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        table[kind] = {
            "expected": c["expected"], "predicted": c["predicted"],
            "precision": round(precision, 3), "recall": round(recall, 3), "f1": round(f1, 3),
            "hidden_any_kind": round(c["hidden"] / c["expected"], 3) if c["expected"] else 1.0,
            "char_coverage": round(c["chars_covered"] / c["chars"], 3) if c["chars"] else 1.0,
        }
    return table


def lookalike_report(cases: list[dict], findings_by_id: dict[str, tuple[Finding, ...]]) -> dict:
    by_category: dict[str, dict] = defaultdict(lambda: {"cases": 0, "cases_with_fp": 0, "false_positives": 0})
    for case in cases:
        if not case["id"].startswith(LOOKALIKE):
            continue
        category = case["id"][len(LOOKALIKE):].rsplit("-", 1)[0]
        row = by_category[category]
        row["cases"] += 1
        findings = findings_by_id[case_key(case)]
        row["false_positives"] += len(findings)
        row["cases_with_fp"] += bool(findings)
    keys = ("cases", "cases_with_fp", "false_positives")
    total = {key: sum(row[key] for row in by_category.values()) for key in keys}
    return {"total": total, "by_category": dict(sorted(by_category.items()))}


def subkind_report(cases: list[dict], findings_by_id: dict[str, tuple[Finding, ...]]) -> dict:
    """Recall and precision of kind "id" per subkind (national_id, passport, iban, …).

    Recall: the share of expected ids of the subkind that an "id" finding overlaps. Precision: of
    the "id" findings that overlap an expected id of the subkind or that overlap nothing expected
    in a case holding that subkind, the share that overlap one. A finding that overlaps nothing in
    a look-alike case counts under "lookalike".
    """
    counts: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for case in cases:
        pairs = zip(case["expected"], expected_spans(case), strict=True)
        spans = [(item["subkind"], *span) for item, span in pairs
                 if item["kind"] == "id" and item.get("subkind")]
        for subkind, _kind, start, end in spans:
            counts[subkind]["expected"] += 1
            counts[subkind]["found"] += any(f.kind == "id" and overlaps(f.start, f.end, start, end)
                                            for f in findings_by_id[case_key(case)])
        # Any expected value of any kind: an id finding over a phone is a phone's, not a stray.
        all_spans = expected_spans(case)
        case_subkinds = {s for s, *_ in spans}
        if not case_subkinds and case["id"].startswith(LOOKALIKE):
            case_subkinds = {"lookalike"}
        for f in findings_by_id[case_key(case)]:
            if f.kind != "id":
                continue
            hit = {s for s, _k, a, b in spans if overlaps(f.start, f.end, a, b)}
            for subkind in hit:
                counts[subkind]["correct"] += 1
            if not hit and not any(overlaps(f.start, f.end, a, b) for _k, a, b in all_spans):
                for subkind in case_subkinds:
                    counts[subkind]["false_positives"] += 1
    table = {}
    for subkind in (*SUBKINDS, *sorted(set(counts) - set(SUBKINDS))):
        c = counts.get(subkind)
        if c is None:
            continue
        predicted = c["correct"] + c["false_positives"]
        table[subkind] = {
            "expected": c["expected"], "found": c["found"], "false_positives": c["false_positives"],
            "recall": round(c["found"] / c["expected"], 3) if c["expected"] else 1.0,
            "precision": round(c["correct"] / predicted, 3) if predicted else 1.0,
        }
    return table


def four_kb(texts: list[str]) -> str:
    sample = ""
    for text in texts:
        if len(sample.encode()) >= 4096:
            break
        sample += text + "\n\n"
    return sample.encode()[:4096].decode(errors="ignore")


def time_4kb(sample: str) -> dict:
    """Wall-clock timings, and the process's CPU time per call: on a shared machine the wall clock
    also counts the time other processes held the cores, the CPU time does not."""
    for _ in range(3):
        redact_text(sample)
    runs, cpu_runs = [], []
    for _ in range(50):
        start, cpu_start = time.perf_counter(), time.process_time()
        redact_text(sample)
        runs.append(time.perf_counter() - start)
        cpu_runs.append(time.process_time() - cpu_start)
    runs.sort()
    cpu_runs.sort()
    p50 = runs[len(runs) // 2]
    return {"p50_ms": round(p50 * 1000, 2), "p95_ms": round(runs[int(len(runs) * 0.95)] * 1000, 2),
            "min_ms": round(runs[0] * 1000, 2), "kb_per_s": round(4096 / 1024 / p50, 1),
            "cpu_p50_ms": round(cpu_runs[len(cpu_runs) // 2] * 1000, 2)}


def throughput(cases: list[dict]) -> dict:
    """Warm timings: 4 KB of corpus texts (dense with personal data: ~1 finding per 60 bytes),
    4 KB of look-alike texts (nothing to redact), and the whole corpus text by text."""
    # Text with findings costs about twice as much: the output is scanned again (idempotence).
    texts = [case["text"] for case in cases]
    random.Random(0).shuffle(texts)
    # dev look-alikes: the ones with no finding at all, so no second scan is triggered
    clean = [case["text"] for case in cases if case["id"].startswith(LOOKALIKE) and case["split"] == "dev"]
    random.Random(0).shuffle(clean)
    corpus_bytes = sum(len(t.encode()) for t in texts)
    start, cpu_start = time.perf_counter(), time.process_time()
    for _ in range(3):
        for text in texts:
            redact_text(text)
    corpus_seconds = (time.perf_counter() - start) / 3
    corpus_cpu_seconds = (time.process_time() - cpu_start) / 3
    return {
        "text_4kb_with_personal_data": time_4kb(four_kb(texts)),
        "text_4kb_without_personal_data": time_4kb(four_kb(clean)),
        "corpus": {"texts": len(texts), "kb": round(corpus_bytes / 1024, 1),
                   "ms_per_text": round(corpus_seconds / len(texts) * 1000, 3),
                   "cpu_ms_per_text": round(corpus_cpu_seconds / len(texts) * 1000, 3),
                   "kb_per_s": round(corpus_bytes / 1024 / corpus_seconds, 1)},
    }


def third_party_code() -> dict:
    """Findings on real source code nobody labelled: the installed Django and DRF (pinned versions).

    Code holds almost no personal data, so nearly every finding here is a false positive; the
    list is kept in the results so each can be checked by eye."""
    import django
    import rest_framework

    django_root, drf_root = Path(django.__file__).parent, Path(rest_framework.__file__).parent
    files = sorted([*django_root.glob("db/models/*.py"), *django_root.glob("contrib/auth/*.py"),
                    *django_root.glob("core/*.py"), *drf_root.glob("*.py")])
    total_bytes, found = 0, []
    for path in files:
        text = path.read_text(encoding="utf-8")
        total_bytes += len(text.encode())
        for f in redact_text(text).findings:
            found.append({"file": str(path.relative_to(django_root.parent)), "kind": f.kind, "rule": f.rule,
                          "value": text[f.start:f.end][:80]})
    by_kind = {kind: sum(1 for f in found if f["kind"] == kind) for kind in KINDS}
    return {"files": len(files), "kb": round(total_bytes / 1024, 1), "findings": len(found),
            "by_kind": by_kind, "list": found}


def show(cases: list[dict], findings_by_id: dict[str, tuple[Finding, ...]]) -> None:
    for case in cases:
        expected = expected_spans(case)
        findings = findings_by_id[case_key(case)]
        text = case["text"]
        missed = [(k, text[s:e]) for k, s, e in expected
                  if not any(f.kind == k and overlaps(f.start, f.end, s, e) for f in findings)]
        wrong = [(f.kind, f.rule, text[f.start:f.end]) for f in findings
                 if not any(k == f.kind and overlaps(f.start, f.end, s, e) for k, s, e in expected)]
        if missed or wrong:
            print(f"{case['id']}: {text!r}")
            for item in missed:
                print(f"    MISSED {item}")
            for item in wrong:
                print(f"    FALSE  {item}")


def subkind_markdown(table: dict) -> list[str]:
    lines = ["| id subkind | expected | recall | precision | stray id findings |", "|---|---|---|---|---|"]
    for subkind, row in table.items():
        lines.append(f"| {subkind} | {row['expected']} | {row['recall']:.3f} | {row['precision']:.3f} | "
                     f"{row['false_positives']} |")
    return lines


def markdown(results: dict) -> str:
    lines = ["| kind | split | expected | precision | recall | F1 | hidden (any kind) |",
             "|---|---|---|---|---|---|---|"]
    for kind in KINDS:
        for split in GROUPS:
            row = results["splits"][split]["kinds"][kind]
            lines.append(f"| {kind} | {split} | {row['expected']} | {row['precision']:.3f} | "
                         f"{row['recall']:.3f} | {row['f1']:.3f} | {row['hidden_any_kind']:.3f} |")
    names = "/".join(SPLITS)
    lines += ["", f"| look-alike category | cases ({names}) | cases with a false positive ({names}) |",
              "|---|---|---|"]
    by_split = [results["splits"][s]["lookalikes"]["by_category"] for s in SPLITS]
    for category in sorted(set().union(*by_split)):
        rows = [split.get(category, {}) for split in by_split]
        lines.append(f"| {category} | {'/'.join(str(r.get('cases', 0)) for r in rows)} | "
                     f"{'/'.join(str(r.get('cases_with_fp', 0)) for r in rows)} |")
    totals = [results["splits"][s]["lookalikes"]["total"] for s in SPLITS]
    lines.append(f"| **all** | {'/'.join(str(t['cases']) for t in totals)} | "
                 f"{'/'.join(str(t['cases_with_fp']) for t in totals)} |")
    for split in ("ids-tune", "ids-tune2", "ids-tune3", "ids-tune4", "ids-tune5", "ids-tune6", "ids-tune7",
                  "ids-tune8"):
        tune = results["splits"][split]
        if tune["cases"]:
            lines += ["", f"`{split}` per id subkind:", "", *subkind_markdown(tune["subkinds"])]
    held_out = results["splits"]["held-out"]["lookalikes"]["total"]
    share = 100 * held_out["cases_with_fp"] / max(held_out["cases"], 1)
    lines.append(f"\nLook-alikes damaged, held-out (test + fresh2 + fresh3): {held_out['cases_with_fp']} of "
                 f"{held_out['cases']} ({share:.1f} %).")
    speed = results["throughput"]
    code = results["third_party_code"]
    lines += ["", f"Third-party code ({code['files']} Django/DRF files, {code['kb']} KB): "
              f"{code['findings']} findings " + str({k: v for k, v in code["by_kind"].items() if v})]
    dense, clean = speed["text_4kb_with_personal_data"], speed["text_4kb_without_personal_data"]
    lines += ["", "| text | min | p50 | p95 | throughput at p50 | CPU time p50 |",
              "|---|---|---|---|---|---|",
              f"| 4 KB dense with personal data | {dense['min_ms']} ms | {dense['p50_ms']} ms | "
              f"{dense['p95_ms']} ms | {dense['kb_per_s']} KB/s | {dense['cpu_p50_ms']} ms |",
              f"| 4 KB without personal data | {clean['min_ms']} ms | {clean['p50_ms']} ms | "
              f"{clean['p95_ms']} ms | {clean['kb_per_s']} KB/s | {clean['cpu_p50_ms']} ms |",
              f"| corpus, one text at a time | | {speed['corpus']['ms_per_text']} ms per text | | "
              f"{speed['corpus']['kb_per_s']} KB/s | {speed['corpus']['cpu_ms_per_text']} ms per text |",
              "", f"First call in a process (loads the word lists): {results['first_call_ms']} ms."]
    return "\n".join(lines)


def blind_results_path(path: Path) -> Path:
    """bench/results/redaction_<file stem>.json: ids_blind.jsonl -> redaction_ids_blind.json."""
    return ROOT / "bench" / "results" / f"redaction_{path.stem}.json"


def blind(path: Path) -> None:
    """Score the blind file and print aggregate figures only (see the module docstring).

    Nothing from a case (text, value, id, note) is printed, also when a line cannot be read or
    scored: such lines are counted, not shown.
    """
    cases, unreadable = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            case = json.loads(line)
            expected_spans(case)
        except (ValueError, KeyError, TypeError):
            unreadable += 1
            continue
        cases.append(case)
    redact_text("Warm-up: Anna Schmidt, anna@example.com")  # loads the word lists
    start = time.perf_counter()
    findings_by_id = {case_key(case): redact_case(case) for case in cases}
    seconds = time.perf_counter() - start
    lookalikes = lookalike_report(cases, findings_by_id)
    results = {
        "file": path.name, "cases": len(cases), "unreadable_lines": unreadable,
        "lookalike_cases": lookalikes["total"]["cases"],
        "ms_per_text": round(seconds / max(len(cases), 1) * 1000, 3),
        "kinds": score(cases, findings_by_id),
        "subkinds": subkind_report(cases, findings_by_id),
        "lookalikes": lookalikes,
    }
    results_path = blind_results_path(path)
    results_path.parent.mkdir(parents=True, exist_ok=True)
    results_path.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = [f"Blind file {path.name}: {len(cases)} cases ({unreadable} unreadable lines), "
             f"{results['ms_per_text']} ms per text.", "",
             "| kind | expected | precision | recall |", "|---|---|---|---|"]
    for kind, row in results["kinds"].items():
        lines.append(f"| {kind} | {row['expected']} | {row['precision']:.3f} | {row['recall']:.3f} |")
    lines += ["", *subkind_markdown(results["subkinds"]), "",
              "| look-alike category | cases | cases with a finding | findings |", "|---|---|---|---|"]
    for category, row in lookalikes["by_category"].items():
        lines.append(f"| {category} | {row['cases']} | {row['cases_with_fp']} | {row['false_positives']} |")
    total = lookalikes["total"]
    lines.append(f"| **all** | {total['cases']} | {total['cases_with_fp']} | {total['false_positives']} |")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", choices=(*GROUPS, "all"),
                        help="print the misses and false positives of a split")
    parser.add_argument("--blind", nargs="*", type=Path, metavar="PATH",
                        help="score the blind files (default: both), printing aggregate figures only")
    args = parser.parse_args()
    if args.blind is not None:
        for path in args.blind or BLINDS:
            if path.exists():
                blind(path)
                print()
        return
    cases = load_cases()
    start = time.perf_counter()
    redact_text("Warm-up: Anna Schmidt, anna@example.com")
    first_call_ms = round((time.perf_counter() - start) * 1000, 1)
    findings_by_id = {case_key(case): redact_case(case) for case in cases}
    results: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "python": platform.python_version(),
        "corpus": {"cases": len(cases), "lookalike_cases": sum(c["id"].startswith(LOOKALIKE) for c in cases)},
        "first_call_ms": first_call_ms,
        "splits": {},
    }
    for split in GROUPS:
        subset = [c for c in cases if in_group(c, split)]
        results["splits"][split] = {
            "cases": len(subset),
            "kinds": score(subset, findings_by_id),
            "lookalikes": lookalike_report(subset, findings_by_id),
            "subkinds": subkind_report(subset, findings_by_id),
        }
    results["third_party_code"] = third_party_code()
    results["throughput"] = throughput(cases)
    if args.show:
        show([c for c in cases if args.show == "all" or in_group(c, args.show)], findings_by_id)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(markdown(results))


if __name__ == "__main__":
    main()
