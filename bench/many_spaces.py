"""Recall for a user who holds many small spaces: 50 and 1,000 spaces, in-process pipeline.

Builds, once, in its own embedded Postgres (var/many), SPACES spaces of PER_SPACE memories
each by raw SQL (sealed as services seal them, through bench/recall_speed.py's helpers;
synthetic vectors blended from the real model's vectors of the corpus texts), a user
holding a viewer role in the first 50 and a user holding one in all of them.

Then it measures, in rounds that alternate the code under test with another checkout's
(`--baseline /path/to/checkout`, the commit before the change), each in its own process
against the same store: a recall naming no space and one naming 5 spaces, for both users.
Per request: wall time, the CPU time of the process and of its Postgres backend, the
pipeline's stage timings (timings_ms) and the number of SQL statements; and, with the same
`as_of`, whether both checkouts ranked the same ids with the same scores. The recall result
cache is off and every query text is new to its process, so each request embeds its query.

    .venv/bin/python bench/many_spaces.py build [--spaces 1000] [--per-space 100]
    .venv/bin/python bench/many_spaces.py run --baseline /work/base [--rounds 2] [--requests 10]
                                          [--cases 0 1 2 3] [--out bench/results/many_spaces.json]

`run` writes bench/results/many_spaces.json and prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "many_spaces.json"
VAR_DIR = HERE.parent / "var" / "many"
SMALL_USER, LARGE_USER = "many-50", "many-1000"
SMALL_COUNT = 50
NAMED = 5
# A request that would run past this many seconds of a case's total is not repeated (the
# old code needs more than 30 s a recall over 1,000 spaces): at least one always runs.
CASE_CAP_SECONDS = 90.0
# Cases by number: 0 and 1 the 50-space user naming none and 5, 2 and 3 the 1,000-space user.
CASES = (0, 1, 2, 3)


def _setup(code: Path) -> None:
    """Django ready with the code of checkout `code`, on this benchmark's store."""
    sys.path.insert(0, str(code))
    os.environ["SAM_VAR_DIR"] = str(VAR_DIR)
    os.environ["DJANGO_SETTINGS_MODULE"] = "samsite.settings.base"
    os.environ["SAM_LOG_LEVEL"] = "WARNING"
    os.environ["SAM_Q_LOG_LEVEL"] = "WARNING"
    os.environ["SAM_RECALL_CACHE_SECONDS"] = "0"
    import django

    django.setup()


# --- build -------------------------------------------------------------------------------

def build(spaces: int, per_space: int) -> None:
    os.environ["SAM_BENCH_VAR_DIR"] = str(VAR_DIR)
    sys.path.insert(0, str(HERE))
    import numpy as np
    import recall_speed as rs  # sets Django up (benchenv) on var/many
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.db.models import Count

    from core.models import Space
    from governance.access import SYSTEM
    from governance.services import membership_grant
    from memories import entry
    from memories.embeddings.registry import get_provider

    call_command("migrate", verbosity=0)
    bases = rs.base_texts()
    cached = VAR_DIR / "base_vectors.npy"
    if not cached.exists():
        np.save(cached, get_provider().embed([entry.embedding_text(b) for b in bases]))
    base_vectors = np.load(cached)
    start = time.perf_counter()
    spaces_of = Space.objects.filter(slug__startswith="many-").annotate(rows=Count("memories"))
    # A space left half-built by an interrupted run is built again.
    spaces_of.filter(rows__lt=per_space).delete()
    built = set(spaces_of.values_list("slug", flat=True))
    todo = [n for n in range(spaces) if _slug(n) not in built]
    with connection.cursor() as cursor:
        if todo:
            cursor.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
        for number, n in enumerate(todo):
            _build_space(n, per_space, bases, base_vectors, cursor)
            if number % 50 == 0:
                elapsed = time.perf_counter() - start
                print(f"  {number}/{len(todo)} spaces at {elapsed:.0f} s", file=sys.stderr)
        if todo:
            cursor.execute("SET maintenance_work_mem = '1GB'")
            cursor.execute("CREATE INDEX memory_embedding_hnsw ON memories_memory USING hnsw "
                           "(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64)")
            cursor.execute("ANALYZE")
    print(f"  rows and index ready at {time.perf_counter() - start:.0f} s", file=sys.stderr)
    users = get_user_model()
    small, _ = users.objects.get_or_create(username=SMALL_USER)
    large, _ = users.objects.get_or_create(username=LARGE_USER)
    for n in range(spaces):
        space = Space.objects.get(slug=_slug(n))
        membership_grant(actor=SYSTEM, space=space, role="viewer", user=large)
        if n < SMALL_COUNT:
            membership_grant(actor=SYSTEM, space=space, role="viewer", user=small)
    print(f"  built in {time.perf_counter() - start:.0f} s", file=sys.stderr)


def _build_space(n: int, per_space: int, bases: list[dict], base_vectors, cursor) -> None:
    """Space many-<n> with its memories, sealed, indexed and counted: one transaction, so
    the space's data key is read once, not once per sealed value."""
    import random

    import numpy as np
    import recall_speed as rs
    from django.db import transaction

    from core.models import Space
    from governance.crypto import datakeys
    from memories import entry
    from memories.search_index import write_index
    from retrieval.channels import vector_literal
    from retrieval.tasks import lexeme_stats_refresh

    with transaction.atomic():
        space = Space.objects.create(slug=_slug(n), name=f"Team {n}")
        key_id = datakeys.active_key_id(space.id)
        rng = np.random.default_rng(n)
        pick = random.Random(n)
        rows, docs = [], []
        for i in range(per_space):
            b1, b2 = pick.randrange(len(bases)), pick.randrange(len(bases))
            base = bases[b1]
            vector = 0.85 * base_vectors[b1] + 0.15 * base_vectors[b2] + rng.normal(0, 0.015, 384)
            vector /= np.linalg.norm(vector)
            service, region = pick.choice(rs.SERVICES), pick.choice(rs.REGIONS)
            title = f"{base['title'][:90]} ({service})"
            content = f"{base['content']} Applies to {service} in {region}."
            summary = base["content"][:300]
            phrases = base["canonical_phrases"]
            state = {"title": title, "content": content, "canonical_phrases": phrases}
            memory_id = f"s{n:04d}x{i:04d}"
            sealed = rs._sealed
            rows.append((
                memory_id, space.id, sealed(space.id, "title", title),
                sealed(space.id, "content", content), sealed(space.id, "summary", summary),
                sealed(space.id, "canonical_phrases", phrases, json_value=True),
                base["tags"], base.get("memory_type", "semantic"), base.get("kind", "fact"),
                sealed(space.id, "source_ref", "bench"),
                sealed(space.id, "context_window", {"applies_to": [], "excludes": []}, json_value=True),
                sealed(space.id, "metadata", {}, json_value=True),
                sealed(space.id, "training_examples", [], json_value=True),
                sealed(space.id, "archive_reason", ""),
                datakeys.keyed_digest(space.id, content), vector_literal(vector),
                datakeys.keyed_digest(space.id, entry.embedding_text(state)), pick.randint(0, 400),
            ))
            docs.append((memory_id, key_id, {**state, "summary": summary, "tags": base["tags"]}))
        cursor.executemany(rs.INSERT_SQL, [(*row, row[-1]) for row in rows])
        write_index(docs)
        cursor.execute(
            "INSERT INTO memories_memorystats (memory_id, space_id, confidence, usage_count, "
            "access_count, reinforced_count, check_pending) "
            "SELECT id, space_id, 0.75, 0, 0, 0, false FROM memories_memory WHERE space_id = %s",
            [space.id])
    lexeme_stats_refresh(space_ids=[space.id])


def _slug(n: int) -> str:
    return f"many-{n:04d}"


# --- measure (one process, one checkout) -------------------------------------------------

def measure(code: Path, round_no: int, requests: int, only: set[int] | None = None) -> list[dict]:
    _setup(code)
    import psutil
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from core.models import Space
    from governance import access
    from governance.crypto import search
    from retrieval.context import RecallContext
    from retrieval.pipeline import RecallRequest, recall

    AS_OF = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

    queries = [json.loads(line)["query"] for line in
               (HERE / "recall_corpus" / "queries.jsonl").read_text().splitlines() if line]
    process = psutil.Process()
    # The SQL runs in this connection's Postgres backend, a process of its own on this machine.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = psutil.Process(cursor.fetchone()[0])
    users = get_user_model().objects
    all_cases = [(SMALL_USER, SMALL_COUNT, False), (SMALL_USER, SMALL_COUNT, True),
                 (LARGE_USER, 1000, False), (LARGE_USER, 1000, True)]
    cases = [case for n, case in enumerate(all_cases) if only is None or n in only]
    # A warm-up recall loads the model, and a token under every space's keys opens the keys,
    # as a running server has them.
    recall(actor=users.get(username=SMALL_USER), request=RecallRequest(
        context=RecallContext(query="warm up the model"), spaces=(_slug(0),)), use_cache=False)
    search.query_tokens(list(Space.objects.filter(slug__startswith="many-").values_list("pk", flat=True)),
                        ["warm"])
    out = []
    for case_no, (username, count, named) in ((n, case) for n, case in enumerate(all_cases) if case in cases):
        user = users.get(username=username)
        samples = []
        case_started = time.perf_counter()
        for n in range(requests):
            spent = time.perf_counter() - case_started
            if samples and spent + spent / len(samples) > CASE_CAP_SECONDS:
                break
            # Every (round, case, request) gets a query text of its own: no cached embedding.
            index = (round_no * 4 + case_no) * requests + n
            text = f"{queries[index % len(queries)]} (ask {index})"
            spaces = tuple(_slug((n * 7 + k * count // NAMED) % count) for k in range(NAMED)) if named else ()
            # One instant for every process, so recency scores compare between the checkouts.
            request = RecallRequest(context=RecallContext(query=text), spaces=spaces, k=5, as_of=AS_OF)
            cpu, db_cpu = process.cpu_times(), backend.cpu_times()
            start = time.perf_counter()
            with access.rights_memoised(), CaptureQueriesContext(connection) as statements:
                result = recall(actor=user, request=request, use_cache=False)
            wall = (time.perf_counter() - start) * 1000
            after, db_after = process.cpu_times(), backend.cpu_times()
            samples.append({
                "query": text, "wall_ms": wall,
                "cpu_ms": ((after.user - cpu.user) + (after.system - cpu.system)) * 1000,
                "db_cpu_ms": ((db_after.user - db_cpu.user) + (db_after.system - db_cpu.system)) * 1000,
                "statements": len(statements), "timings_ms": result.timings_ms,
                "ids": [item.id for item in result.items],
                "scores": [round(item.score, 6) for item in result.items],
            })
        out.append({"user_spaces": count, "named": NAMED if named else 0, "samples": samples})
    return out


# --- run: alternate the two checkouts ----------------------------------------------------

def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


def summarise(samples: list[dict]) -> dict:
    walls, cpus = [s["wall_ms"] for s in samples], [s["cpu_ms"] for s in samples]
    db_cpus = [s.get("db_cpu_ms", 0.0) for s in samples]
    stages = sorted({k for s in samples for k in s["timings_ms"]})
    return {
        "requests": len(samples),
        "wall_ms": {"p50": pct(walls, 50), "p95": pct(walls, 95)},
        "cpu_ms": {"p50": pct(cpus, 50), "p95": pct(cpus, 95)},
        "db_cpu_ms": {"p50": pct(db_cpus, 50), "p95": pct(db_cpus, 95)},
        "statements": {"min": min(s["statements"] for s in samples),
                       "max": max(s["statements"] for s in samples)},
        "stage_mean_ms": {k: round(statistics.mean(s["timings_ms"].get(k, 0) for s in samples), 1)
                          for k in stages},
    }


def run(baseline: Path, rounds: int, requests: int, cases: list[int], out_path: Path) -> None:
    code = {"after": HERE.parent, "before": baseline}
    gathered: dict[tuple[str, int, int], list[dict]] = {}
    for round_no in range(rounds):
        order = ("before", "after") if round_no % 2 == 0 else ("after", "before")
        for label in order:
            print(f"round {round_no}: {label}", file=sys.stderr)
            done = subprocess.run(
                [sys.executable, __file__, "measure", "--code", str(code[label]), "--round", str(round_no),
                 "--requests", str(requests), "--cases", *map(str, cases)],
                check=True, capture_output=True, text=True)
            for case in json.loads(done.stdout.strip().splitlines()[-1]):
                gathered.setdefault((label, case["user_spaces"], case["named"]), []).extend(case["samples"])
    results = []
    for (label, count, named), samples in sorted(gathered.items(),
                                                 key=lambda kv: (kv[0][1], kv[0][2], kv[0][0])):
        results.append({"code": label, "user_spaces": count, "named": named, **summarise(samples),
                        "same_answers_as_before": _same_answers(gathered, count, named)})
    same = {f"{r['user_spaces']} spaces, {r['named']} named": r["same_answers_as_before"]
            for r in results if r["code"] == "after"}
    out = {"machine": f"{os.cpu_count()} cores, shared with other work; baseline measured in the same run",
           "transport": "in-process pipeline (retrieval.pipeline.recall), result cache off",
           "rounds": rounds, "requests_per_case_and_round": requests,
           "same_answers_where_both_ran": same, "results": results}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(json.dumps(out, indent=2) + "\n")
    print(f"same ids and scores where both ran: {same}")
    print("| spaces held | spaces named | code | requests | wall p50 | wall p95 | CPU p50 | CPU p95 "
          "| Postgres CPU p50 | p95 | SQL statements | slowest stages (mean ms) | same answers |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        top = sorted(((v, k) for k, v in r["stage_mean_ms"].items() if k != "total"), reverse=True)[:3]
        stages = ", ".join(f"{k} {v:g}" for v, k in top)
        named = r["named"] or "none"
        statements = r["statements"]
        count = f"{statements['min']}" if statements["min"] == statements["max"] else \
            f"{statements['min']}–{statements['max']}"
        print(f"| {r['user_spaces']:,} | {named} | {r['code']} | {r['requests']} "
              f"| {r['wall_ms']['p50']:g} ms | {r['wall_ms']['p95']:g} ms "
              f"| {r['cpu_ms']['p50']:g} ms | {r['cpu_ms']['p95']:g} ms "
              f"| {r['db_cpu_ms']['p50']:g} ms | {r['db_cpu_ms']['p95']:g} ms "
              f"| {count} | {stages} | {r['same_answers_as_before'] or ''} |")


def _same_answers(gathered: dict[tuple[str, int, int], list[dict]], count: int, named: int) -> str | None:
    """How many of the requests both checkouts ran (the same round and position give the same
    query text) ranked the same ids with the same scores: "n of m", None if none compare."""
    before = {s["query"]: (s["ids"], s["scores"]) for s in gathered.get(("before", count, named), [])}
    after = {s["query"]: (s["ids"], s["scores"]) for s in gathered.get(("after", count, named), [])}
    both = sorted(set(before) & set(after))
    if not both:
        return None
    return f"{sum(before[q] == after[q] for q in both)} of {len(both)}"


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--spaces", type=int, default=1000)
    b.add_argument("--per-space", type=int, default=100)
    m = sub.add_parser("measure")
    m.add_argument("--code", type=Path, required=True)
    m.add_argument("--round", type=int, default=0)
    m.add_argument("--requests", type=int, default=10)
    m.add_argument("--cases", type=int, nargs="+", default=list(CASES))
    r = sub.add_parser("run")
    r.add_argument("--baseline", type=Path, required=True)
    r.add_argument("--rounds", type=int, default=2)
    r.add_argument("--requests", type=int, default=10)
    r.add_argument("--cases", type=int, nargs="+", default=list(CASES))
    r.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.command == "build":
        build(args.spaces, args.per_space)
    elif args.command == "measure":
        print(json.dumps(measure(args.code, args.round, args.requests, set(args.cases))))
    else:
        run(args.baseline, args.rounds, args.requests, args.cases, args.out)


if __name__ == "__main__":
    main()
