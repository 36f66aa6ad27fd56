"""Conversational recall (LoCoMo-style) on bench/data/conversational.jsonl.

One space per dialogue (conv-d00 ...), one episodic memory per turn ("{speaker}: {text}",
occurred at the session's date, noon UTC), embedded with the local model, lexeme
statistics refreshed. The spaces are user spaces with no note cap (a user space otherwise
keeps its 200 most active memories: a long chat would lose its oldest turns). Each
question is then run through the default recall pipeline, exactly as
bench/recall_quality.py scores "pipeline, profile sam" (its run_pipeline, top 10,
restricted to the dialogue's space, as of the question's asked_at), and through its
pure-vector and pure-full-text baselines.

A question is a hit at k when any of its evidence turns is among the top k (LoCoMo's rule;
"all@10", every evidence turn in the top 10, is recorded as well). Dialogues with an even
number are the tuning half, odd ones the held-out half.

    .venv/bin/python bench/data/conversational_build.py        # (re)writes the data
    .venv/bin/python bench/recall_conversational.py [--half tuning|heldout|both]
        [--profile NAME] [--limit-dialogues N] [--rebuild] [--data synthetic|written]

The built store is reused while each space holds every turn, embedded, and its stored
fingerprint matches the data; --rebuild forces a fresh one. Writes
bench/results/recall_conversational.json and prints Markdown tables.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# recall_quality's own runners score the questions; it imports benchenv (Django set up) first.
import recall_quality as rq
from benchenv import ROOT
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django_q.conf import Conf
from threadpoolctl import threadpool_limits

from core.models import Space
from governance import spaces as space_services
from governance.access import SYSTEM
from memories import limits, services
from memories.embeddings import jobs as embedding_jobs
from memories.embeddings import registry as embeddings
from memories.models import EmbeddingStatus, Memory, MemoryEntity
from retrieval import pipeline, scoring
from retrieval.tasks import lexeme_stats_refresh

# Two sets in one format: "synthetic", generated from templates by
# bench/data/conversational_build.py, and "written", long conversations each written freely by
# one writer, its questions by another who saw only that conversation
# (bench/data/conversational_written/README.md). In both, the odd dialogues are the held-out
# half; in the written set that half is blind: read by no one tuning SAM.
DATA_SETS = {
    "synthetic": (ROOT / "bench" / "data" / "conversational.jsonl",
                  ROOT / "bench" / "results" / "recall_conversational.json"),
    "written": (ROOT / "bench" / "data" / "conversational_written",
                ROOT / "bench" / "results" / "recall_conversational_written.json"),
}
KINDS = ("single", "temporal", "multihop", "open")
BLIND_HALF = {"written": "heldout"}
HALVES = ("tuning", "heldout")
K = rq.K  # 10: the pipeline's limit, and the deepest cut scored
# Part of every space's fingerprint: bump it when the turn -> memory mapping below changes,
# so a store built the old way is rebuilt.
MAPPING_VERSION = "3"  # 2: entities linked as turns settle; 3: no note cap
FINGERPRINT_LABEL = "Data fingerprint:"

Runner = Callable[[dict[str, Any]], list[str]]


# --- data -------------------------------------------------------------------------------

def data_files(data: Path) -> list[Path]:
    """The set's JSON Lines files: one file, or each `.jsonl` of a folder (its halves apart)."""
    return sorted(data.glob("*.jsonl")) if data.is_dir() else [data]


def load(data: Path) -> tuple[dict[str, list[dict]], list[dict]]:
    """Turns by dialogue (in file order) and the questions."""
    turns: dict[str, list[dict]] = {}
    questions: list[dict] = []
    lines = [line for path in data_files(data) for line in path.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        if not line:
            continue
        row = json.loads(line)
        if row["type"] == "turn":
            turns.setdefault(row["dialogue"], []).append(row)
        else:
            questions.append(row)
    return turns, questions


def fingerprint(turns: list[dict]) -> str:
    """The dialogue's turns as stored, plus the mapping version: what the built space depends on.

    Questions are left out on purpose, so editing them does not force re-embedding.
    """
    digest = hashlib.sha256(MAPPING_VERSION.encode())
    for turn in turns:
        digest.update(json.dumps(turn, sort_keys=True).encode())
    return digest.hexdigest()[:24]


def slug_of(dialogue: str) -> str:
    return f"conv-{dialogue}"


# --- the store --------------------------------------------------------------------------

def noon(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def title_of(turn: dict) -> str:
    """The speaker and the turn's first words (titles weigh most in full-text and embedding)."""
    head = " ".join(turn["text"].split()[:8])
    title = f"{turn['speaker']}: {head}"
    return title if len(title) <= 120 else title[:119].rstrip() + "…"


def memory_content(turn: dict) -> str:
    return f"{turn['speaker']}: {turn['text']}"


def is_current(dialogue: str, turns: list[dict]) -> bool:
    space = Space.objects.filter(slug=slug_of(dialogue)).defer(None).first()
    if space is None or f"{FINGERPRINT_LABEL} {fingerprint(turns)}" not in (space.description or ""):
        return False
    stored = Memory.objects.filter(space=space)
    ready = stored.filter(embedding_status=EmbeddingStatus.READY).count()
    # Settled turns are linked to the names they mention (none linked: not settled here).
    linked = MemoryEntity.objects.filter(memory__space=space).exists()
    # An archived turn (a note cap, a lifecycle rule) could not be recalled: not this benchmark.
    return stored.count() == len(turns) == ready and linked and not stored.filter(archived=True).exists()


def build_space(dialogue: str, turns: list[dict]) -> dict[str, Any]:
    """A fresh space holding one memory per turn, embedded and indexed."""
    slug = slug_of(dialogue)
    Space.objects.filter(slug=slug).delete()
    # As recall_quality: nothing is merged, reinforced or superseded, so every turn stays
    # its own memory (chit-chat repeats itself: "Haha yes" is said many times).
    space = space_services.space_create(
        actor=SYSTEM, slug=slug, name=f"Conversation {dialogue}", kind="user",
        description=f"Conversational recall benchmark, dialogue {dialogue}. "
                    f"{FINGERPRINT_LABEL} {fingerprint(turns)}",
        duplicate_policy="keep", near_duplicate_policy="keep", supersession_policy="off",
        # A user space keeps its 200 most active notes (memories.lifecycle.user_notes): turns
        # are not notes, and a long chat would lose its oldest ones before it was asked.
        note_cap=0)
    items = [{
        "id": turn["id"], "space": slug, "title": title_of(turn),
        "content": memory_content(turn), "kind": "fact", "memory_type": "episodic",
        "occurred_at": noon(turn["date"]).isoformat(), "tags": [],
        "source": {"type": "import", "ref": "bench/data/conversational.jsonl"},
    } for turn in turns]
    start = time.perf_counter()
    # With Conf.SYNC the embedding job runs inline as the insert commits, so this includes
    # embedding; the pass below embeds whatever that left (normally nothing).
    result = services.memory_bulk_create(actor=SYSTEM, items=items, atomic=True)
    if result.failed:
        raise SystemExit(f"{dialogue}: turns rejected: {[(r.index, r.errors) for r in result.failed][:5]}")
    # Redaction would hide a turn's detail from recall; the data is written to avoid it.
    redacted = [turns[row.index]["id"] for row in result.rows if row.redaction_report]
    created = time.perf_counter() - start
    with connection.cursor() as cursor:
        # The store's clock as if each turn were remembered when it was said, so "as of
        # asked_at" sees turns of the right age (recency, confidence decay).
        cursor.execute(f"UPDATE {Memory._meta.db_table} SET created_at = occurred_at, "
                       f"updated_at = occurred_at WHERE space_id = %s", [space.pk])
    ids = [turn["id"] for turn in turns]
    start = time.perf_counter()
    for offset in range(0, len(ids), 256):
        embedding_jobs.memories_embed(memory_ids=ids[offset:offset + 256])
    embedded = time.perf_counter() - start
    if not is_current(dialogue, turns):
        raise SystemExit(f"{dialogue}: the built space does not check out (count, vectors or fingerprint)")
    return {"dialogue": dialogue, "memories": len(ids), "create_s": round(created, 2),
            "embed_s": round(embedded, 2), "redacted": redacted}


def ensure_store(turns: dict[str, list[dict]], dialogues: list[str], rebuild: bool) -> dict[str, Any]:
    start = time.perf_counter()
    built = []
    for dialogue in dialogues:
        if rebuild or not is_current(dialogue, turns[dialogue]):
            built.append(build_space(dialogue, turns[dialogue]))
            print(f"built {slug_of(dialogue)}: {built[-1]['memories']} memories", file=sys.stderr)
    if built:
        space_ids = list(Space.objects.filter(slug__in=[slug_of(b["dialogue"]) for b in built])
                         .values_list("id", flat=True))
        lexeme_stats_refresh(space_ids=space_ids)
    return {
        "seconds": round(time.perf_counter() - start, 1),
        "rebuilt": [b["dialogue"] for b in built],
        "reused": [d for d in dialogues if d not in {b["dialogue"] for b in built}],
        "memories_created": sum(b["memories"] for b in built),
        "create_and_embed_seconds": round(sum(b["create_s"] for b in built), 1),
        "embed_pass_seconds": round(sum(b["embed_s"] for b in built), 1),
        "redacted_turns": [t for b in built for t in b["redacted"]],
    }


# --- scoring ----------------------------------------------------------------------------

def as_query(question: dict) -> dict[str, Any]:
    """A question in the shape recall_quality's runners take."""
    return {"query": question["question"], "space": slug_of(question["dialogue"]), "tags": []}


def forget_query_embedding(query: dict[str, Any]) -> None:
    """Drop the cached vector of this query (pipeline.embed_query's key), so each method's
    latency includes embedding the question, on every run alike."""
    text = rq.query_text(query)
    digest = hashlib.sha256(f"{embeddings.get_provider().name}|{text}".encode()).hexdigest()
    cache.delete(f"sam:qemb:{digest}")


def methods(profile: str) -> list[tuple[str, Runner]]:
    def full_pipeline(question: dict) -> list[str]:
        # As of the question's asked_at: the request's as_of, the pipeline's clock for
        # recency and confidence decay (it reads no dates out of the question itself).
        return rq.run_pipeline(as_query(question), profile, now=noon(question["asked_at"]))

    return [
        (f"pipeline, profile {profile}", full_pipeline),
        ("vector only", lambda question: rq.run_vector(as_query(question))),
        ("full-text only", lambda question: rq.run_fulltext(as_query(question))),
    ]


def twins(turns: dict[str, list[dict]]) -> dict[str, str]:
    """Each turn id -> the first turn of its dialogue with the same speaker and text.

    Identical turns ("Yara: Any news?" twice) have identical vectors, and Postgres returns
    exact ties in physical row order, which a rebuild or a vacuum changes. No evidence turn
    has a twin, so scores never depend on that order; the determinism digest reads the
    ranked lists with twins made one, so it changes only when the ranking does.
    """
    canonical: dict[str, str] = {}
    for rows in turns.values():
        first: dict[tuple[str, str], str] = {}
        for turn in rows:
            canonical[turn["id"]] = first.setdefault((turn["speaker"], turn["text"]), turn["id"])
    return canonical


def run(questions: list[dict], name: str, runner: Runner, canonical: dict[str, str]) -> dict[str, Any]:
    ranked: dict[str, list[str]] = {}
    latencies: list[float] = []
    for question in questions:
        forget_query_embedding(as_query(question))
        start = time.perf_counter()
        ranked[question["id"]] = runner(question)[:K]
        latencies.append((time.perf_counter() - start) * 1000)
    stable = {qid: [canonical.get(i, i) for i in ids] for qid, ids in ranked.items()}
    digest = hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]
    return {"name": name, "ranked": ranked, "latency_ms": latencies, "ranked_digest": digest}


def hit_rank(ranked: list[str], evidence: list[str]) -> int | None:
    """1-based rank of the first evidence turn, None if none is in the top K."""
    return next((i + 1 for i, memory_id in enumerate(ranked) if memory_id in evidence), None)


def summarise(questions: list[dict], ranked: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict]] = {kind: [q for q in questions if q["kind"] == kind] for kind in KINDS}
    groups["overall"] = questions
    out = {}
    for group, rows in groups.items():
        if not rows:
            continue
        ranks = [hit_rank(ranked[q["id"]], q["evidence"]) for q in rows]
        every = [set(q["evidence"]) <= set(ranked[q["id"]]) for q in rows]
        out[group] = {
            "n": len(rows),
            "r@5": round(sum(1 for r in ranks if r is not None and r <= 5) / len(rows), 4),
            "r@10": round(sum(1 for r in ranks if r is not None) / len(rows), 4),
            "all@10": round(sum(every) / len(rows), 4),
            "mrr@10": round(sum(1 / r for r in ranks if r is not None) / len(rows), 4),
        }
    return out


def percentile(values: list[float], q: float) -> float:
    if len(values) < 2:
        return values[0] if values else 0.0
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


# --- report -----------------------------------------------------------------------------

def recall_table(half: dict[str, dict]) -> str:
    names = list(half)
    head = "| kind | n | " + " | ".join(f"{n} R@5 | {n} R@10" for n in names) + " |"
    lines = [head, "|---|---:|" + "---:|---:|" * len(names)]
    for group in (*KINDS, "overall"):
        first = half[names[0]].get(group)
        if first is None:
            continue
        cells = " | ".join(f"{half[n][group]['r@5']:.3f} | {half[n][group]['r@10']:.3f}" for n in names)
        label = f"**{group}**" if group == "overall" else group
        lines.append(f"| {label} | {first['n']} | {cells} |")
    return "\n".join(lines)


def latency_table(latency: dict[str, dict]) -> str:
    lines = ["| method | p50 ms | p95 ms | mean ms |", "|---|---:|---:|---:|"]
    for name, row in latency.items():
        lines.append(f"| {name} | {row['p50']:.1f} | {row['p95']:.1f} | {row['mean']:.1f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", choices=sorted(DATA_SETS), default="synthetic",
                        help="Which conversations (default: the synthetic set).")
    parser.add_argument("--half", choices=(*HALVES, "both"), default="both")
    parser.add_argument("--profile", choices=sorted(scoring.PROFILES), default=scoring.DEFAULT_PROFILE,
                        help="Weight profile of the pipeline (default: SAM's default).")
    parser.add_argument("--limit-dialogues", type=int, default=None, metavar="N",
                        help="Only the first N dialogues of the chosen half or halves.")
    parser.add_argument("--rebuild", action="store_true", help="Rebuild the store even if it is current.")
    args = parser.parse_args()

    call_command("migrate", verbosity=0)
    Conf.SYNC = True  # embedding runs inline here; nothing else is queued
    data, results = DATA_SETS[args.data]
    every_turn, questions = load(data)
    # A turn too short to be a memory of its own ("WHAT", an emoji) is refused by SAM's entry
    # rules; it is left out, and a question only it answers counts as missed.
    turns = {d: [t for t in rows if len(memory_content(t)) >= limits.CONTENT[0]]
             for d, rows in every_turn.items()}
    too_short = sorted(t["id"] for rows in every_turn.values() for t in rows
                       if len(memory_content(t)) < limits.CONTENT[0])
    halves = HALVES if args.half == "both" else (args.half,)
    dialogues = [d for d in sorted(turns) if ("tuning" if int(d[1:]) % 2 == 0 else "heldout") in halves]
    dialogues = dialogues[:args.limit_dialogues] if args.limit_dialogues else dialogues
    questions = [q for q in questions if q["dialogue"] in dialogues]

    # Embedding inline (Conf.SYNC) runs django-q's worker start-up hook, which shrinks this
    # process's BLAS pool to a worker's share for good (memories.embeddings.worker_threads). Restored
    # here, so questions are embedded alike on the first run after a build and on later
    # ones: with 1 thread instead of 2, vectors differ in the 7th digit and near-ties swap.
    with threadpool_limits(limits=None):
        build = ensure_store(turns, dialogues, args.rebuild)
    print(f"store: {len(build['rebuilt'])} dialogues built, {len(build['reused'])} reused, "
          f"{build['seconds']} s", file=sys.stderr)
    if build["redacted_turns"]:
        print(f"warning: redaction changed {len(build['redacted_turns'])} turns", file=sys.stderr)

    pipeline.embed_query("warm up the embedding model")  # its load is not a query's latency
    start = time.perf_counter()
    canonical = twins({d: turns[d] for d in dialogues})
    runs = [run(questions, name, runner, canonical) for name, runner in methods(args.profile)]
    query_seconds = round(time.perf_counter() - start, 1)

    output: dict[str, Any] = {
        "data": {"set": args.data, "file": str(data.relative_to(ROOT)),
                 "sha256": hashlib.sha256(b"".join(p.read_bytes() for p in data_files(data))).hexdigest(),
                 "dialogues": dialogues, "turns": sum(len(turns[d]) for d in dialogues),
                 "turns_too_short_to_store": [t for t in too_short if t.split("-")[0] in dialogues],
                 "questions": len(questions)},
        "run": {"half": args.half, "limit_dialogues": args.limit_dialogues, "rebuild": args.rebuild},
        "k": K, "profile": args.profile, "hit_rule": "any evidence turn in the top k (LoCoMo)",
        "as_of": "each question's asked_at, 12:00 UTC", "build": build, "query_seconds": query_seconds,
        "halves": {}, "latency_ms": {}, "ranked_digest": {r["name"]: r["ranked_digest"] for r in runs},
    }
    for half in halves:
        subset = [q for q in questions if q["half"] == half]
        if subset:
            output["halves"][half] = {r["name"]: summarise(subset, r["ranked"]) for r in runs}
    for r in runs:
        values = r["latency_ms"]
        output["latency_ms"][r["name"]] = {"p50": round(percentile(values, 50), 2),
                                          "p95": round(percentile(values, 95), 2),
                                          "mean": round(statistics.fmean(values), 2)}
    # A blind half's figures are reported, never its questions' misses: reading them is tuning.
    blind = BLIND_HALF.get(args.data)
    output["questions"] = [{
        "id": q["id"], "kind": q["kind"], "half": q["half"], "evidence": q["evidence"],
        "hit_rank": {r["name"]: hit_rank(r["ranked"][q["id"]], q["evidence"]) for r in runs},
        "pipeline_top10": runs[0]["ranked"][q["id"]],
    } for q in questions if q["half"] != blind]

    for half, table in output["halves"].items():
        n = len([q for q in questions if q["half"] == half])
        print(f"\n### {half} half ({n} questions), hit at k = any evidence turn in the top k\n")
        print(recall_table(table))
    print(f"\n### Latency per query ({len(questions)} queries, question embedding included)\n")
    print(latency_table(output["latency_ms"]))
    print(f"\nbuild {build['seconds']} s ({len(build['rebuilt'])} dialogues built), "
          f"queries {query_seconds} s for {len(runs)} methods")
    results.parent.mkdir(parents=True, exist_ok=True)
    results.write_text(json.dumps(output, indent=2) + "\n")


if __name__ == "__main__":
    main()
