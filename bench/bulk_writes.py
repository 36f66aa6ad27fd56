"""Bulk write speed: `POST /api/v1/memories/bulk/` with realistic batches, per row and per stage.

The batches are what an import sends: conversational turns (bench/data/conversational.jsonl,
2 to 770 characters, many short repeats such as "lol" that reinforce the memory stored) and
notes (bench/recall_corpus/memories.jsonl, with tags, phrases and metadata), 100 to 500 rows
per request, each request with an Idempotency-Key. Embedding is excluded: it runs on the
worker later (the jobs are queued, no worker runs).

Two code checkouts are measured side by side on one embedded Postgres (their own spaces):
this one and `--baseline` (another worktree, e.g. the commit this work started from). Each
runs in its own process; the batches alternate between them (ABAB, the first of each pair
swapped every batch), so both see the same machine load.

- In process (Django's test client, the whole middleware and DRF stack): rows/s, wall and
  CPU per row of the web process and of Postgres (the postmaster's process tree), queries
  per request, and a per-row breakdown by stage (time.perf_counter accumulators wrapped
  around the functions of each stage, self time, so nested stages are not counted twice).
- Over HTTP (`--http`): the same through gunicorn as samsite/gunicorn_conf.py runs it
  (2 workers of 2 threads), CPU of the gunicorn process tree and of Postgres.
- After the writes, the steps the worker runs once vectors are stored (`memories.settle`:
  write checks, categories, entities, note cap), per row, on a sample embedded first (the
  embedding itself is not timed).

Run from the repository root (its own embedded Postgres under var/bench):

    .venv/bin/python bench/bulk_writes.py --baseline ../wt-base [--rows 3000] [--http]

Writes bench/results/bulk_writes.json and prints a Markdown table for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import itertools
import json
import os
import platform
import signal
import subprocess
import sys
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = ROOT / "bench" / "results" / "bulk_writes.json"
VAR_DIR = ROOT / "var" / "bench"
BATCH_SIZES = [100, 250, 500, 150, 400, 300, 200, 350, 450, 120]
HTTP_PORTS = {"before": 8791, "after": 8792}

# Stage -> the functions whose self time it sums ("module:attr" or "module:Class.method").
# A name absent from one checkout is skipped there; both checkouts name most of them.
STAGES: dict[str, list[str]] = {
    "validation (request shape)": ["memories.api.serializers:MemoryBulkInputSerializer.validate"],
    "spaces, roles, modes": ["memories.services:_readable_spaces_by_slug", "governance.policy:policy",
                             "memories.services:_check_superseded_by"],
    "normalise and field checks": ["memories.entry:normalise", "memories.entry:validate",
                                   "memories.services:_parse_occurred_at"],
    "suggestions (summary, phrases, tags)": ["memories.entry:fill_suggestions",
                                             "memories.services:_known_tags_of",
                                             "memories.services:known_tags"],
    "redaction": ["memories.services:_redact"],
    "sealing (encryption)": ["governance.crypto.cipher:seal_bytes"],
    "keyed hashes": ["governance.crypto.datakeys:keyed_digest", "governance.crypto.datakeys:digest_under"],
    "dedupe and reinforce": ["memories.services:_duplicates_of", "memories.services:_reinforce"],
    "insert (memories, stats, versions)": ["memories.services:_insert"],
    "audit": ["governance.audit.services:audit_record", "governance.audit.services:audit_record_many"],
    "search index": ["memories.services:_index", "memories.search_index:write_index"],
    "embedding job queued": ["memories.embeddings.jobs:enqueue_embedding"],
    "idempotency": ["governance.idempotency:key_claim", "governance.idempotency:key_record",
                    "governance.idempotency:key_release"],
    "response": ["memories.api.serializers:MemoryBulkOutputSerializer.data"],
}
SETTLE_STAGES: dict[str, list[str]] = {
    "write checks": ["memories.lifecycle.write_checks:after_settled"],
    "categories": ["memories.categories.services:place"],
    "entities": ["memories.entities.linking:link"],
    "note cap": ["memories.lifecycle.user_notes:after_settled"],
}


# --- the rows --------------------------------------------------------------------------

def _title_of(speaker: str, text: str) -> str:
    title = f"{speaker}: {' '.join(text.split()[:8])}"
    return title if len(title) <= 120 else title[:119].rstrip() + "…"


def rows() -> list[dict[str, Any]]:
    """Turns and notes interleaved (about four turns to one note), in a fixed order."""
    turns = [t for t in _jsonl(ROOT / "bench/data/conversational.jsonl") if t["type"] == "turn"]
    notes = _jsonl(ROOT / "bench/recall_corpus/memories.jsonl")
    turn_items = [{
        "title": _title_of(t["speaker"], t["text"]), "content": f"{t['speaker']}: {t['text']}",
        "kind": "fact", "memory_type": "episodic", "occurred_at": f"{t['date']}T12:00:00Z",
        "source": {"type": "import", "ref": f"chat/{t['dialogue']}/{t['session']}"},
        "metadata": {"speaker": t["speaker"], "turn": t["id"]},
    } for t in turns]
    note_items = [{key: n[key] for key in ("title", "content", "canonical_phrases", "tags", "kind",
                                           "memory_type", "reliability", "confidence_score", "importance")
                   if key in n} | {"source": {"type": "import", "ref": "notes"}} for n in notes]
    mixed, notes_iter = [], iter(note_items)
    for n, item in enumerate(turn_items):
        mixed.append(item)
        if n % 4 == 3:
            mixed.extend(itertools.islice(notes_iter, 1))
    return mixed + list(notes_iter)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


def batches(total: int) -> list[list[dict[str, Any]]]:
    items = rows()[:total]
    out, start = [], 0
    for size in itertools.cycle(BATCH_SIZES):
        if start >= len(items):
            return out
        out.append(items[start:start + size])
        start += size
    return out


# --- process CPU -----------------------------------------------------------------------

def tree_cpu(pid: int) -> float:
    """CPU seconds of a process and its children, living and reaped."""
    import psutil

    try:
        parent = psutil.Process(pid)
        total = sum(parent.cpu_times()[:4])  # user, system, children_user, children_system
        for child in parent.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                total += sum(child.cpu_times()[:2])
        return total
    except psutil.Error:
        return 0.0


def postmaster_pid() -> int:
    return int((VAR_DIR / "pgdata" / "postmaster.pid").read_text().split()[0])


# --- the child: one checkout's code in its own process ---------------------------------

class StageClock:
    """Self time (wall and CPU) and queries per stage: a stage's time excludes the stages it
    calls. CPU time (time.thread_time) is what a stage costs on a busy machine; wall time
    adds the waits on Postgres and on a CPU."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self.queries: dict[str, int] = defaultdict(int)
        # [stage, wall start, CPU start, wall and CPU spent in nested stages]
        self.stack: list[list[Any]] = []

    def wrap(self, stage: str, func):
        clock = self

        @functools.wraps(func)
        def timed(*args, **kwargs):
            clock.stack.append([stage, time.perf_counter(), time.thread_time(), 0.0, 0.0])
            try:
                return func(*args, **kwargs)
            finally:
                name, start, cpu_start, nested, nested_cpu = clock.stack.pop()
                spent, cpu = time.perf_counter() - start, time.thread_time() - cpu_start
                clock.seconds[name] += spent - nested
                clock.cpu[name] += cpu - nested_cpu
                if clock.stack:
                    clock.stack[-1][3] += spent
                    clock.stack[-1][4] += cpu
        return timed

    def count_query(self, execute, sql, params, many, context):
        self.queries[self.stack[-1][0] if self.stack else "other"] += 1
        return execute(sql, params, many, context)

    def take(self) -> tuple[dict[str, float], dict[str, float], dict[str, int]]:
        seconds, cpu, queries = dict(self.seconds), dict(self.cpu), dict(self.queries)
        self.seconds.clear()
        self.cpu.clear()
        self.queries.clear()
        return seconds, cpu, queries


def instrument(clock: StageClock, stages: dict[str, list[str]]) -> list[str]:
    """Wrap every function `stages` names, wherever a loaded module holds it; returns the
    names found."""
    found = []
    for stage, names in stages.items():
        for name in names:
            module_name, _, attr = name.partition(":")
            module = importlib.import_module(module_name)
            owner: Any = module
            *path, leaf = attr.split(".")
            for part in path:
                owner = getattr(owner, part, None)
            original = getattr(owner, leaf, None) if owner is not None else None
            if original is None:
                continue
            if isinstance(original, property):
                setattr(owner, leaf, property(clock.wrap(stage, original.fget)))
            elif path:
                setattr(owner, leaf, clock.wrap(stage, original))
            else:
                wrapped = clock.wrap(stage, original)
                # `from x import f` copies: replace every module-level reference.
                for loaded in list(sys.modules.values()):
                    namespace = getattr(loaded, "__dict__", None)
                    if namespace is not None and namespace.get(leaf) is original:
                        setattr(loaded, leaf, wrapped)
            found.append(name)
    return found


def child(code_root: Path, variant: str) -> None:
    """Serve commands from the driver on stdin, one JSON line each; answer on stdout."""
    global _ANSWERS
    # Answers only on stdout: anything else printed goes to stderr.
    _ANSWERS, sys.stdout = sys.stdout, sys.stderr
    sys.path.insert(0, str(code_root))
    os.chdir(code_root)
    os.environ["SAM_VAR_DIR"] = str(VAR_DIR)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
    os.environ["SAM_LOG_LEVEL"] = "WARNING"
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import setup_test_environment
    from django_q.conf import Conf
    from rest_framework.test import APIClient

    from core.models import Space
    from governance import spaces as space_services
    from governance.access import SYSTEM
    from governance.services import api_token_issue, membership_grant

    setup_test_environment()
    if variant == "after":
        call_command("migrate", verbosity=0)
    Conf.SYNC = False  # the embedding jobs wait in the ORM broker: no worker runs
    clock = StageClock()
    found = instrument(clock, STAGES) + instrument(clock, SETTLE_STAGES)
    stamp = int(time.time())
    user, _ = get_user_model().objects.get_or_create(username=f"bulk-bench-{variant}")
    _, token = api_token_issue(user=user, name="bulk bench")
    slugs = {}
    for purpose in ("inproc", "http", "settle"):
        slug = slugs[purpose] = f"bulk-{variant}-{purpose}-{stamp}"
        space = space_services.space_create(actor=SYSTEM, slug=slug, name=slug, kind="user")
        membership_grant(actor=SYSTEM, space=space, role="owner", user=user)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    answer({"token": token, "slugs": slugs, "instrumented": found})
    for line in sys.stdin:
        command = json.loads(line)
        if command["do"] == "post":
            items = [{**item, "space": slugs[command.get("purpose", "inproc")]} for item in command["items"]]
            clock.take()
            with connection.execute_wrapper(clock.count_query):
                cpu, start = time.process_time(), time.perf_counter()
                response = client.post("/api/v1/memories/bulk/", {"items": items}, format="json",
                                       HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))
                wall, cpu = time.perf_counter() - start, time.process_time() - cpu
            seconds, stage_cpu, queries = clock.take()
            body = response.json()
            answer({"status": response.status_code, "wall": wall, "cpu": cpu, "stages": seconds,
                    "stage_cpu": stage_cpu,
                    "queries": queries, "created": body.get("created"), "reinforced": body.get("reinforced"),
                    "failed": body.get("failed"), "results": body.get("results")})
        elif command["do"] == "settle":
            answer(settle_sample(clock, slugs["settle"], command["items"], actor=SYSTEM))
        elif command["do"] == "cleanup":
            Space.objects.filter(slug__in=slugs.values()).delete()
            answer({"ok": True})
            return


def settle_sample(clock: StageClock, slug: str, items: list[dict], *, actor) -> dict:
    """Write `items`, embed them (not timed), then time the after-write steps per row."""
    from memories import services, settle
    from memories.embeddings import jobs as embedding_jobs

    result = services.memory_bulk_create(actor=actor, items=[{**i, "space": slug} for i in items])
    ids = [m.id for m in result.created]
    embedding_jobs.memories_embed(memory_ids=ids)
    clock.take()
    cpu, start = time.process_time(), time.perf_counter()
    settle.settle(ids)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    seconds, stage_cpu, _ = clock.take()
    return {"rows": len(ids), "wall": wall, "cpu": cpu, "stages": seconds, "stage_cpu": stage_cpu}


_ANSWERS = sys.stdout


def answer(value: dict) -> None:
    _ANSWERS.write(json.dumps(value) + "\n")
    _ANSWERS.flush()


# --- the driver ------------------------------------------------------------------------

class Checkout:
    """One checkout's child process (and, with --http, its gunicorn)."""

    def __init__(self, variant: str, code_root: Path) -> None:
        self.variant, self.code_root = variant, code_root
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", variant,
             "--code-root", str(code_root)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=code_root, start_new_session=True)
        self.ready = self.read()
        self.server: subprocess.Popen | None = None

    def ask(self, command: dict) -> dict:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        return self.read()

    def read(self) -> dict:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"{self.variant}: the benchmark process exited")
        return json.loads(line)

    def start_server(self) -> None:
        env = {**os.environ, "SAM_VAR_DIR": str(VAR_DIR), "SAM_PORT": str(HTTP_PORTS[self.variant]),
               "SAM_WEB_ACCESS_LOG": "", "SAM_LOG_LEVEL": "WARNING", "SAM_DEBUG": "0"}
        self.server = subprocess.Popen(
            [str(Path(sys.executable).with_name("gunicorn")), "-c", "samsite/gunicorn_conf.py",
             "samsite.wsgi", "--log-level", "warning"],
            cwd=self.code_root, env=env, stdout=subprocess.DEVNULL,
            stderr=(VAR_DIR / f"gunicorn-{self.variant}.log").open("w"), start_new_session=True)

    def stop(self) -> None:
        for process in (self.server, self.process):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=40)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    process.wait()


def wait_until_up(checkout: Checkout) -> None:
    import httpx

    for _ in range(240):
        assert checkout.server is not None
        if checkout.server.poll() is not None:
            raise SystemExit(f"{checkout.variant}: gunicorn exited during start-up")
        with contextlib.suppress(httpx.HTTPError):
            if httpx.get(f"http://127.0.0.1:{HTTP_PORTS[checkout.variant]}/api/v1/memories/", timeout=5,
                         headers={"Authorization": f"Bearer {checkout.ready['token']}"}).status_code == 200:
                return
        time.sleep(0.5)
    raise SystemExit(f"{checkout.variant}: gunicorn did not answer")


def post_http(checkout: Checkout, items: list[dict], client) -> dict:
    assert checkout.server is not None
    slug = checkout.ready["slugs"]["http"]
    body = {"items": [{**item, "space": slug} for item in items]}
    web_cpu, pg_cpu = tree_cpu(checkout.server.pid), tree_cpu(postmaster_pid())
    start = time.perf_counter()
    response = client.post(f"http://127.0.0.1:{HTTP_PORTS[checkout.variant]}/api/v1/memories/bulk/",
                           json=body, headers={"Authorization": f"Bearer {checkout.ready['token']}",
                                               "Idempotency-Key": str(uuid.uuid4())}, timeout=300)
    wall = time.perf_counter() - start
    assert response.status_code in (200, 201), response.text[:500]
    return {"wall": wall, "web_cpu": tree_cpu(checkout.server.pid) - web_cpu,
            "pg_cpu": tree_cpu(postmaster_pid()) - pg_cpu, "created": response.json()["created"]}


def summarise(samples: list[dict], rows_total: int) -> dict:
    wall = sum(s["wall"] for s in samples)
    out = {"requests": len(samples), "rows": rows_total, "rows_per_s": round(rows_total / wall, 1),
           "wall_ms_per_row": round(wall / rows_total * 1000, 3)}
    for key in ("cpu", "web_cpu", "pg_cpu"):
        if key in samples[0]:
            out[f"{key}_ms_per_row"] = round(sum(s[key] for s in samples) / rows_total * 1000, 3)
    if "queries" in samples[0]:
        counts = [sum(s["queries"].values()) for s in samples]
        out["queries_per_request"] = {"min": min(counts), "max": max(counts)}
    return out


OTHER = "other (DRF, auth, middleware, JSON, commit)"


def per_row_stages(samples: list[dict], rows_total: int, *, key: str = "stages",
                   total: str = "wall") -> dict[str, float]:
    totals: dict[str, float] = defaultdict(float)
    for sample in samples:
        for stage, seconds in sample[key].items():
            totals[stage] += seconds
        totals[OTHER] += sample[total] - sum(sample[key].values())
    return {stage: round(seconds / rows_total * 1000, 3) for stage, seconds in totals.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--child")
    parser.add_argument("--code-root", type=Path)
    parser.add_argument("--baseline", type=Path, required=False)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--settle-rows", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.child:
        child(args.code_root, args.child)
        return
    import httpx

    roots = {"after": ROOT} | ({"before": args.baseline.resolve()} if args.baseline else {})
    plan = batches(args.rows)
    checkouts: dict[str, Checkout] = {}
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores", "python": platform.python_version(),
        "load_average_at_start": os.getloadavg(), "batch_sizes": [len(b) for b in plan],
        "checkouts": {v: str(r) for v, r in roots.items()}}
    try:
        # "after" first: it migrates the shared store before the baseline starts.
        for variant in ("after", "before"):
            if variant in roots:
                checkouts[variant] = Checkout(variant, roots[variant])
        order = list(checkouts)
        samples: dict[str, list[dict]] = {v: [] for v in checkouts}
        for n, batch in enumerate(plan):
            for variant in (order if n % 2 == 0 else order[::-1]):
                pg = tree_cpu(postmaster_pid())
                sample = checkouts[variant].ask({"do": "post", "items": batch})
                sample["pg_cpu"] = tree_cpu(postmaster_pid()) - pg
                assert sample["status"] in (200, 201), sample
                sample["rows"] = len(batch)
                del sample["results"]
                samples[variant].append(sample)
                print(f"{variant} batch {n} ({len(batch)} rows): {len(batch) / sample['wall']:.0f} rows/s",
                      file=sys.stderr)
        results["in_process"] = {v: {**summarise(s, sum(x["rows"] for x in s)),
                                     "stage_ms_per_row": per_row_stages(s, sum(x["rows"] for x in s)),
                                     "stage_cpu_ms_per_row": per_row_stages(
                                         s, sum(x["rows"] for x in s), key="stage_cpu", total="cpu"),
                                     "created": sum(x["created"] for x in s),
                                     "reinforced": sum(x["reinforced"] for x in s),
                                     "failed": sum(x["failed"] for x in s)}
                                 for v, s in samples.items()}
        write(results, args.out)  # kept if a later phase fails
        if args.http:
            for checkout in checkouts.values():
                checkout.start_server()
            for checkout in checkouts.values():
                wait_until_up(checkout)
            http_samples: dict[str, list[dict]] = {v: [] for v in checkouts}
            with httpx.Client() as client:
                for n, batch in enumerate(plan):
                    for variant in (order if n % 2 == 0 else order[::-1]):
                        sample = post_http(checkouts[variant], batch, client)
                        sample["rows"] = len(batch)
                        http_samples[variant].append(sample)
            results["http"] = {v: summarise(s, sum(x["rows"] for x in s)) for v, s in http_samples.items()}
        if args.settle_rows:
            sample = rows()[-args.settle_rows:]
            results["settle"] = {}
            for variant, checkout in checkouts.items():
                done = checkout.ask({"do": "settle", "items": sample})
                results["settle"][variant] = {
                    "rows": done["rows"], "cpu_ms_per_row": round(done["cpu"] / done["rows"] * 1000, 2),
                    "wall_ms_per_row": round(done["wall"] / done["rows"] * 1000, 2),
                    "stage_ms_per_row": {k: round(v / done["rows"] * 1000, 2)
                                         for k, v in done["stages"].items()},
                    "stage_cpu_ms_per_row": {k: round(v / done["rows"] * 1000, 2)
                                             for k, v in done["stage_cpu"].items()}}
        for checkout in checkouts.values():
            checkout.ask({"do": "cleanup"})
    finally:
        for checkout in checkouts.values():
            checkout.stop()
    results["load_average_at_end"] = os.getloadavg()
    write(results, args.out)
    print(table(results))


def write(results: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")


def table(r: dict) -> str:
    variants = list(r["in_process"])
    lines = ["| measure | " + " | ".join(variants) + " |", "|---|" + "---|" * len(variants)]

    def line(label: str, section: str, key: str) -> None:
        if section in r:
            lines.append(f"| {label} | " + " | ".join(str(r[section][v].get(key)) for v in variants) + " |")

    line("rows/s, over HTTP (gunicorn)", "http", "rows_per_s")
    line("web CPU ms per row, over HTTP", "http", "web_cpu_ms_per_row")
    line("Postgres CPU ms per row, over HTTP", "http", "pg_cpu_ms_per_row")
    line("rows/s, in process", "in_process", "rows_per_s")
    line("web CPU ms per row, in process", "in_process", "cpu_ms_per_row")
    line("Postgres CPU ms per row, in process", "in_process", "pg_cpu_ms_per_row")
    line("queries per request (min–max)", "in_process", "queries_per_request")
    stages = list(dict.fromkeys(k for v in variants for k in r["in_process"][v]["stage_ms_per_row"]))
    for stage in stages:
        lines.append(f"| stage: {stage}, CPU / wall ms per row | " + " | ".join(
            f"{r['in_process'][v]['stage_cpu_ms_per_row'].get(stage, '–')} / "
            f"{r['in_process'][v]['stage_ms_per_row'].get(stage, '–')}" for v in variants) + " |")
    if "settle" in r:
        lines.append("| after-write steps (worker), CPU ms per row | " + " | ".join(
            str(r["settle"][v]["cpu_ms_per_row"]) for v in variants) + " |")
        settle_stages = list(dict.fromkeys(k for v in variants for k in r["settle"][v]["stage_ms_per_row"]))
        for stage in settle_stages:
            lines.append(f"| after-write: {stage}, CPU / wall ms per row | " + " | ".join(
                f"{r['settle'][v]['stage_cpu_ms_per_row'].get(stage, '–')} / "
                f"{r['settle'][v]['stage_ms_per_row'].get(stage, '–')}" for v in variants) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
