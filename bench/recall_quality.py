"""Recall quality on the labelled corpus in bench/recall_corpus/.

Loads the corpus into its own embedded Postgres (var/bench), embeds it with the local
model, then scores every query with: pure vector search, pure full-text search, and the
full pipeline under each weight profile. Queries with an even number form the
development half (used to choose SAM's default weights); odd ones the test half, on
which the headline figures are reported.

    .venv/bin/python bench/recall_quality.py [--tune]

Writes bench/results/recall_quality.json and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import sys
import time
from datetime import timedelta

from benchenv import ROOT
from django.core.management import call_command
from django.db import connection, transaction
from django.utils import timezone
from django_q.conf import Conf

from core.models import Space
from governance import spaces as space_services
from governance.access import SYSTEM
from governance.crypto import search
from memories import services
from memories.embeddings import jobs as embedding_jobs
from memories.models import Memory
from retrieval import channels, pipeline, scoring
from retrieval.context import RecallContext, build_query_text
from retrieval.tasks import lexeme_stats_refresh

CORPUS = ROOT / "bench" / "recall_corpus"
RESULTS = ROOT / "bench" / "results" / "recall_quality.json"
K = 10


def load_corpus() -> tuple[list[dict], list[dict]]:
    memories = [json.loads(line) for line in (CORPUS / "memories.jsonl").read_text().splitlines() if line]
    queries = [json.loads(line) for line in (CORPUS / "queries.jsonl").read_text().splitlines() if line]
    return memories, queries


def build_store(memories: list[dict], now) -> None:
    """Fresh spaces with the corpus, its ages and usage, embedded and indexed."""
    slugs = sorted({m["space"] for m in memories})
    Space.objects.filter(slug__in=slugs).delete()
    for slug in slugs:
        # The corpus is scored as labelled: two rows that redaction makes equal ("… is
        # [name]") stay two, and its deliberate conflicts stay side by side for recall to flag.
        space_services.space_create(actor=SYSTEM, slug=slug, name=slug, kind="project",
                                    duplicate_policy="keep", near_duplicate_policy="keep",
                                    supersession_policy="off")
    fields = ("id", "space", "title", "content", "canonical_phrases", "tags", "kind", "memory_type",
              "reliability", "confidence_score", "importance")
    items = [{f: m[f] for f in fields if f in m} for m in memories]
    result = services.memory_bulk_create(actor=SYSTEM, items=items, atomic=True)
    if result.failed:
        raise SystemExit(f"corpus rows rejected: {[(r.index, r.errors) for r in result.failed][:5]}")
    with connection.cursor() as cursor:
        for m in memories:
            created = now - timedelta(days=m.get("days_old", 0))
            used = None if m.get("days_since_used") is None else now - timedelta(days=m["days_since_used"])
            cursor.execute("UPDATE memories_memory SET created_at = %s, updated_at = %s WHERE id = %s",
                           [created, created, m["id"]])
            cursor.execute("UPDATE memories_memorystats SET last_used_at = %s WHERE memory_id = %s",
                           [used, m["id"]])
    ids = [m["id"] for m in memories]
    start = time.perf_counter()
    for offset in range(0, len(ids), 256):
        embedding_jobs.memories_embed(memory_ids=ids[offset:offset + 256])
    print(f"embedded {len(ids)} memories in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    lexeme_stats_refresh(space_ids=list(Space.objects.filter(slug__in=slugs).values_list("id", flat=True)))


def scope_for(query: dict) -> channels.Scope:
    space = Space.objects.get(slug=query["space"])
    return channels.Scope(space_ids=(space.id,), filters=query_filters(query))


def query_filters(query: dict) -> channels.Filters:
    return channels.Filters(tags=tuple(query.get("tags") or ()))


def query_text(query: dict) -> str:
    return build_query_text(RecallContext(query=query["query"], active_task=query.get("active_task", "")))


def run_vector(query: dict) -> list[str]:
    vector = channels.vector_literal(pipeline.embed_query(query_text(query)))
    with transaction.atomic():
        return channels.vector_candidates(scope_for(query), vector, K)


def run_fulltext(query: dict) -> list[str]:
    """Plain Postgres full-text: OR of every query lexeme, ranked by ts_rank_cd."""
    lexemes = channels.query_lexemes(query_text(query))
    scope = scope_for(query)
    # Every lexeme (no row budget), as the keyed tokens the index holds.
    plan = channels.LexicalPlan(all_lexemes=lexemes, chosen=lexemes,
                                tokens=search.query_tokens(scope.space_ids, lexemes))
    return channels.lexical_candidates(scope, plan, K)


def run_pipeline(query: dict, profile: str, *, weights=None, thresholds=None, now=None) -> list[str]:
    request = pipeline.RecallRequest(
        context=RecallContext(query=query["query"], active_task=query.get("active_task", "")),
        spaces=(query["space"],), k=K, profile=profile, weights=weights, thresholds=thresholds,
        filters=query_filters(query), as_of=now,
    )
    return [item.id for item in pipeline.recall(actor=SYSTEM, request=request, use_cache=False).items]


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    hits = [1 if memory_id in relevant else 0 for memory_id in ranked[:K]]
    dcg = sum(h / math.log2(i + 2) for i, h in enumerate(hits))
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), K)))
    first = next((i for i, h in enumerate(hits) if h), None)
    returned5 = ranked[:5]
    return {
        "recall@5": sum(hits[:5]) / len(relevant),
        "recall@10": sum(hits) / len(relevant),
        "ndcg@10": dcg / ideal if ideal else 0.0,
        "mrr": 0.0 if first is None else 1 / (first + 1),
        "precision@5": sum(hits[:5]) / 5,
        # Of what was actually returned in the top 5 (thresholds may return fewer): how much is relevant.
        "precision_returned@5": (sum(hits[:5]) / len(returned5)) if returned5 else 0.0,
        "empty": 0.0 if ranked else 1.0,
    }


def mean(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 4) for key in rows[0]} if rows else {}


def evaluate(name: str, runner, queries: list[dict]) -> dict:
    per_query = []
    start = time.perf_counter()
    for query in queries:
        per_query.append((query, metrics(runner(query), set(query["relevant"]))))
    elapsed = time.perf_counter() - start
    by_category: dict[str, list] = {}
    for query, m in per_query:
        by_category.setdefault(query["category"], []).append(m)
    return {
        "name": name,
        "queries": len(queries),
        "overall": mean([m for _, m in per_query]),
        "by_category": {c: mean(rows) for c, rows in sorted(by_category.items())},
        "ms_per_query": round(elapsed / max(1, len(queries)) * 1000, 1),
    }


WEIGHT_GRID = {
    "semantic": (0.5, 0.6, 0.7, 0.8),
    "lexical": (0.0, 0.05, 0.1, 0.2),
    "exact": (0.0, 0.05, 0.1, 0.2),
    "tags": (0.0, 0.05, 0.1),
    "recency": (0.0, 0.05, 0.1, 0.15),
    "confidence": (0.0, 0.05),
    "importance": (0.0, 0.05),
}
GATE_GRID = {"similarity": (0.2, 0.25, 0.3, 0.35), "composite_min": (0.1, 0.15, 0.2, 0.25, 0.3)}


def tune(dev: list[dict], now) -> dict:
    """Choose SAM's default on the development half.

    Candidates and signals do not depend on the weights, so they are collected once per
    query and re-scored for every grid point. Weights maximise nDCG@10 without thresholds;
    then the gate is the strictest one that leaves at most 2% of answerable queries empty.
    """
    collected = []
    for query in dev:
        request = pipeline.RecallRequest(
            context=RecallContext(query=query["query"], active_task=query.get("active_task", "")),
            spaces=(query["space"],), k=K, filters=query_filters(query), as_of=now)
        items = pipeline.candidates_with_signals(scope_for(query), request, query_text(query), now)
        collected.append((set(query["relevant"]), items))

    def ranked(items, weights, thresholds=None):
        scored = sorted(((scoring.composite(i.signals, weights), i) for i in items),
                        key=lambda pair: (-round(pair[0], 6), pair[1].id))
        if thresholds:
            scored = [(s, i) for s, i in scored if scoring.passes(i.signals, s, thresholds)]
        return [i.id for _, i in scored[:K]]

    trials = []
    for values in itertools.product(*WEIGHT_GRID.values()):
        weights = {k: v for k, v in zip(WEIGHT_GRID, values, strict=True) if v}
        rows = [metrics(ranked(items, weights), relevant) for relevant, items in collected]
        trials.append({"weights": weights, **mean(rows)})
    trials.sort(key=lambda t: (-t["ndcg@10"], -t["recall@10"], len(t["weights"])))
    best = trials[0]["weights"]
    gates = []
    for similarity, composite_min in itertools.product(*GATE_GRID.values()):
        thresholds = scoring.Thresholds(similarity=similarity, composite_min=composite_min, lexical=0.10)
        rows = [metrics(ranked(items, best, thresholds), relevant) for relevant, items in collected]
        gates.append({"similarity": similarity, "composite_min": composite_min, **mean(rows)})
    allowed = [g for g in gates if g["empty"] <= 0.02] or gates
    allowed.sort(key=lambda g: (-g["precision_returned@5"], -g["ndcg@10"]))
    print(f"grid: {len(trials)} weightings; best {best} ndcg@10={trials[0]['ndcg@10']}", file=sys.stderr)
    print(f"gate: {allowed[0]}", file=sys.stderr)
    return {"weights_top5": trials[:5], "gate": allowed[0], "gates": gates}


def table(results: list[dict], keys=("recall@5", "recall@10", "ndcg@10", "mrr", "precision@5",
                                      "precision_returned@5", "empty")) -> str:
    lines = ["| method | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    for r in results:
        lines.append(f"| {r['name']} | " + " | ".join(f"{r['overall'][k]:.3f}" for k in keys) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tune", action="store_true", help="Grid-search weights on the dev half.")
    parser.add_argument("--reuse", action="store_true", help="Reuse the loaded corpus if present.")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    Conf.SYNC = True  # embedding runs inline here; nothing else is queued
    memories, queries = load_corpus()
    now = timezone.now().replace(microsecond=0)
    if not (args.reuse and Memory.objects.filter(pk=memories[0]["id"]).exists()):
        build_store(memories, now)
    dev = [q for q in queries if int(q["qid"][1:]) % 2 == 0]
    test = [q for q in queries if int(q["qid"][1:]) % 2 == 1]

    output: dict = {"corpus": {"memories": len(memories), "queries": len(queries), "dev": len(dev),
                               "test": len(test)}, "k": K}
    if args.tune:
        output["tuning"] = tune(dev, now)

    methods = [("vector only", run_vector), ("full-text only", run_fulltext)]
    for name in ("seed000", "seed001", "seed004", "sam"):
        methods.append((f"pipeline, profile {name}", lambda q, n=name: run_pipeline(q, n, now=now)))
    methods.append(("pipeline, sam, no thresholds",
                    lambda q: run_pipeline(q, "sam", thresholds={"similarity": 0.0, "composite_min": 0.0},
                                           now=now)))
    for split_name, split in (("test", test), ("all", queries)):
        output[split_name] = [evaluate(name, runner, split) for name, runner in methods]
        print(f"\n### {split_name} queries ({len(split)})\n")
        print(table(output[split_name]))
    default = next(r for r in output["test"] if r["name"] == "pipeline, profile sam")
    print("\n### SAM default by category (test half)\n")
    print("| category | recall@10 | ndcg@10 | mrr |\n|---|---|---|---|")
    for category, m in default["by_category"].items():
        print(f"| {category} | {m['recall@10']:.3f} | {m['ndcg@10']:.3f} | {m['mrr']:.3f} |")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(output, indent=2) + "\n")


if __name__ == "__main__":
    main()
