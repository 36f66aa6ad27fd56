"""Mixed load with locust: recall, writes and PRD events together against 100k memories.

Closed-loop locust users (no think time) pick, per request, recall 80 %, create 15 % and PRD
event 5 %: recall on the sealed 100k-memory space `speed-100000` (bench/recall_speed.py builds
it), every query text new so neither the recall cache nor the query-embedding cache answers;
create, a new memory in that space that the job worker embeds; PRD event, the next event of a
realistic log (bench/prd_workload.py) on the user's own execution, started in setup in a space
of its own. Each configuration (web processes x users) gets a fresh gunicorn with the shipped
config (samsite/gunicorn_conf.py, SAM_WEB_WORKERS, 2 threads each) and a real
`manage.py qcluster` (the shipped 2 workers), a warm-up, then a fixed measured window. After
the window the queue is left to drain, the servers stop and the memories the run wrote are
deleted, so the space is back at 100,000 memories for the next configuration (and for
bench/recall_speed.py, which rebuilds a space whose count is off).

locust runs on the same cores as SAM, in a child process of its own: it patches the process
for gevent on import, which the Django side (psycopg, subprocesses) must not get.

CPU is read per process tree (web, job worker, Postgres) over the measured window and shown
per request of the mix as well as in cores. After the window, a trivial authenticated GET
(`/api/v1/me/mode/`, one small read) sent one at a time gives the fixed cost of any request
(token check, middleware, DRF) in CPU and wall time.

`--baseline <checkout>` measures another checkout (the code a change starts from, e.g. a git
worktree at the base commit) beside this one in the same run: each configuration runs under
both, alternating which goes first from round to round (`--rounds`), against the same bench
store (the baseline's servers get this checkout's var/bench). On a shared machine only
figures from the same run compare; CPU per request is the steadier of them.

Run from the repository root (its own embedded Postgres under var/bench), with locust from
requirements/bench.txt:

    .venv/bin/python bench/load_mix.py [--users 2 4 8] [--web 1 2] [--seconds 60] [--warmup 10]
                                       [--seed 7] [--track] [--out bench/results/load_mix.json]
                                       [--baseline ../sam-base] [--rounds 1]

Writes bench/results/load_mix.json (or --out) and prints Markdown tables for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "bench" / "recall_corpus"
RESULTS = ROOT / "bench" / "results" / "load_mix.json"
PORT = 8768
SPACE = "speed-100000"
SIZE = 100_000
# bench/recall_speed.py names the rows it builds m<size>x<n>; anything else in the space is ours.
BUILT_PREFIX = f"m{SIZE}x"
PRD_SPACE = "load-mix-prd"
MIX = {"recall": 80, "create": 15, "prd_event": 5}
SERVICES = ["billing", "search", "auth", "orders", "media", "reports", "notify", "catalog"]
Q_WORKERS = 2  # the shipped default (SAM_Q_WORKERS)
# The per-request overhead probe: an authenticated GET that does almost nothing.
PING_PATH = "/api/v1/me/mode/"
PING_REQUESTS = 200
# The process trees whose CPU a request costs (locust and the rest of the machine are not SAM's).
SAM_PROCESSES = ("web", "postgres", "worker")
WEB_THREADS = 2  # the shipped default (SAM_WEB_THREADS)


def corpus(name: str) -> list[dict]:
    return [json.loads(line) for line in (CORPUS / name).read_text().splitlines() if line]


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))], 1)


# --- the load generator (child process; no Django here) ------------------------------

@dataclass
class Recorder:
    """What the measured window saw: latencies and errors per request type, recall stages."""

    measuring: bool = False
    latencies: dict[str, list[float]] = field(default_factory=lambda: {name: [] for name in MIX})
    errors: dict[str, int] = field(default_factory=lambda: dict.fromkeys(MIX, 0))
    error_samples: list[str] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)

    def on_request(self, request_type: str, name: str, response_time: float, response_length: int,
                   exception: BaseException | None = None, **kwargs: Any) -> None:
        """locust's request event: fires when a request completes (or fails)."""
        if not self.measuring:
            return
        if exception is None:
            self.latencies[name].append(response_time)
            return
        self.errors[name] += 1
        if len(self.error_samples) < 20:
            self.error_samples.append(f"{name}: {str(exception)[:300]}")


def user_class(config: dict, record: Recorder) -> type:
    """The locust user: an agent that recalls, writes memories and logs PRD events."""
    import prd_workload  # bench/ is on sys.path: this script runs from it
    from locust import FastHttpUser, constant, task

    queries = corpus("queries.jsonl")
    label = config["label"]
    numbers = itertools.count()

    class Agent(FastHttpUser):
        host = config["host"]
        wait_time = constant(0)  # closed loop: each user sends its next request when one returns
        default_headers = {"Authorization": f"Bearer {config['token']}"}

        def on_start(self) -> None:
            self.n = next(numbers)
            self.rng = random.Random(config["seed"] * 1000 + self.n)
            self.counter = 0
            self.execution = config["executions"][self.n % len(config["executions"])]
            # Each user follows its own execution's log in order, so every event fits the state.
            self.events = prd_workload.events(1_000_000, seed=config["seed"] + self.n)

        def text(self) -> str:
            self.counter += 1
            row = queries[self.rng.randrange(len(queries))]
            # Distinct per request, configuration and user: no recall or query-embedding cache hits.
            service = SERVICES[self.counter % len(SERVICES)]
            return f"{row['query']} ({service} {label} {self.n}-{self.counter})"

        @task(MIX["recall"])
        def recall(self) -> None:
            body = {"spaces": [SPACE], "k": 5, "track": config["track"], "query": self.text()}
            response = self.client.post("/api/v1/recall/", json=body, name="recall")
            if record.measuring and response.status_code == 200:
                record.stages.append(response.json()["data"]["timings_ms"])

        @task(MIX["create"])
        def create(self) -> None:
            self.client.post("/api/v1/memories/", name="create", json={
                "space": SPACE, "title": f"Load note {label} {self.n}-{self.counter}",
                "content": f"Client {self.n} observed that {self.text()} needs a retry budget of "
                           f"{self.rng.randint(1, 9)} attempts before paging the on-call engineer."})

        @task(MIX["prd_event"])
        def prd_event(self) -> None:
            self.client.post(f"/api/v1/prd/executions/{self.execution}/events/", json=next(self.events),
                             name="prd_event")

    return Agent


def run_locust(config_path: Path) -> None:
    """Child process: warm up, print MEASURE-START, measure, print MEASURE-END, write the record.

    The parent reads the two markers on stdout to take its CPU readings at the same moments.
    """
    import gevent
    from locust.env import Environment

    config = json.loads(config_path.read_text())
    random.seed(config["seed"])  # locust picks each user's next task with the global RNG
    record = Recorder()
    env = Environment(user_classes=[user_class(config, record)], host=config["host"])
    env.events.request.add_listener(record.on_request)
    runner = env.create_local_runner()
    runner.start(config["users"], spawn_rate=config["users"])
    gevent.sleep(config["warmup"])
    record.measuring = True
    print("MEASURE-START", flush=True)
    gevent.sleep(config["seconds"])
    record.measuring = False
    print("MEASURE-END", flush=True)
    runner.quit()
    Path(config["out"]).write_text(json.dumps({
        "latencies": record.latencies, "errors": record.errors,
        "error_samples": record.error_samples, "stages": record.stages}))


# --- the driver (Django side) -------------------------------------------------------

def start(command: list[str], env: dict[str, str], *, cwd: Path = ROOT, **kwargs: Any) -> subprocess.Popen:
    # os.environ carries SAM_VAR_DIR (benchenv), so a baseline checkout's servers use this
    # checkout's bench store: the same database, data keys and secret.
    return subprocess.Popen(command, cwd=cwd, env={**os.environ, **env}, start_new_session=True, **kwargs)


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # the main process stops its own workers
        try:
            process.wait(timeout=40)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def tree_cpu_seconds(pid: int | None) -> float:
    """CPU seconds used by a process and its descendants, including those already reaped
    (a parent's children_* times), so short-lived workers and backends still count."""
    if pid is None:
        return 0.0
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for process in processes:
        try:
            t = process.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def postmaster_pid(data_dir: Path) -> int | None:
    """The embedded Postgres serving `data_dir` (its backends are the postmaster's children)."""
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "-D" in cmdline and cmdline[cmdline.index("-D") + 1] == str(data_dir):
            return process.pid
    return None


def machine_busy_seconds() -> float:
    t = psutil.cpu_times()
    return sum(t) - t.idle - getattr(t, "iowait", 0.0)


def cpu_reading(pids: dict[str, int | None]) -> dict[str, float]:
    return {**{name: tree_cpu_seconds(pid) for name, pid in pids.items()}, "machine": machine_busy_seconds()}


def wait_until_up(server: subprocess.Popen, token: str) -> None:
    import httpx

    for _ in range(120):
        if server.poll() is not None:
            raise SystemExit("gunicorn exited during start-up")
        try:
            if httpx.get(f"http://127.0.0.1:{PORT}/api/v1/spaces/", timeout=2,
                         headers={"Authorization": f"Bearer {token}"}).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit("gunicorn did not answer")


def setup() -> str:
    """The 100k space (built if missing), a contributor there and owner of the PRD space;
    returns a fresh API token."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from recall_speed import existing_space

    from core.models import Space
    from governance.access import SYSTEM
    from governance.services import api_token_issue, membership_grant

    call_command("migrate", verbosity=0)
    space = existing_space(SIZE)
    remove_written(space.id)  # what an interrupted run may have left
    user, _ = get_user_model().objects.get_or_create(username="load-mix")
    membership_grant(actor=SYSTEM, space=space, role="contributor", user=user)
    prd_space, _ = Space.objects.get_or_create(slug=PRD_SPACE, defaults={"name": "load mix PRD"})
    membership_grant(actor=SYSTEM, space=prd_space, role="owner", user=user)
    _, raw = api_token_issue(user=user, name=f"load-mix-{int(time.time())}")
    return raw


def remove_written(space_id: int) -> int:
    """Delete (through the service, so entities and counters follow) every memory of the
    space that the build did not write; returns how many."""
    from governance.access import SYSTEM
    from memories.models import Memory
    from memories.services import memory_delete

    ids = list(Memory.objects.filter(space_id=space_id).exclude(id__startswith=BUILT_PREFIX)
               .values_list("id", flat=True))
    for memory_id in ids:
        memory_delete(actor=SYSTEM, memory_id=memory_id)
    return len(ids)


def start_executions(token: str, label: str, users: int) -> list[str]:
    """One PRD execution per user (its own log, so events never race for the same state)."""
    import httpx

    ids = []
    with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=30,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        for n in range(users):
            response = client.post("/api/v1/prd/executions/", json={
                "space": PRD_SPACE, "prd_ref": f"load-mix/{label}/user-{n}", "title": f"Load mix {n}"})
            response.raise_for_status()
            ids.append(response.json()["execution"]["id"])
    return ids


def backlog(space_id: int, since: float) -> dict[str, int]:
    """Jobs waiting in the ORM broker and memories written in the run not yet embedded."""
    from datetime import UTC, datetime

    from django_q.models import OrmQ

    from memories.models import Memory

    written = Memory.objects.filter(space_id=space_id, created_at__gte=datetime.fromtimestamp(since, UTC))
    return {"queued_jobs": OrmQ.objects.count(),
            "pending_embeddings": written.exclude(embedding_status="ready").count()}


def queued_jobs() -> int:
    from django_q.models import OrmQ

    return OrmQ.objects.count()


def job_lag(since: float) -> dict[str, dict]:
    """Per job type enqueued since `since`: seconds from enqueue to done (django-q2 stamps
    `started` when it enqueues), i.e. how far the worker lagged behind the writes."""
    from datetime import UTC, datetime

    from django_q.models import Task

    lags: dict[str, list[float]] = {}
    for func, enqueued, stopped in Task.objects.filter(
            started__gte=datetime.fromtimestamp(since, UTC)).values_list("func", "started", "stopped"):
        lags.setdefault(func.rsplit(".", 1)[-1], []).append((stopped - enqueued).total_seconds())
    return {func: {"n": len(v), "p50": pct(v, 50), "p95": pct(v, 95), "max": round(max(v), 1)}
            for func, v in sorted(lags.items())}


def drain(space_id: int, since: float, limit: float) -> float | None:
    """Seconds until the worker has caught up (None: not within `limit`)."""
    began = time.monotonic()
    while time.monotonic() - began < limit:
        if not any(backlog(space_id, since).values()):
            return round(time.monotonic() - began, 1)
        time.sleep(1)
    return None


@dataclass(frozen=True)
class Plan:
    """One configuration and the run-wide settings."""

    web: int
    users: int
    seconds: int
    warmup: int
    seed: int
    track: bool
    drain_limit: int
    # Whose code serves: "change" (this checkout) or "baseline" (--baseline).
    variant: str = "change"
    checkout: Path = ROOT

    @property
    def label(self) -> str:
        return f"w{self.web}u{self.users}s{self.seed}{self.variant[0]}t{int(time.time())}"


def ping_overhead(token: str, pids: dict[str, int | None]) -> dict[str, float]:
    """CPU and wall time of a trivial authenticated GET, sent one at a time on an idle server."""
    import httpx

    latencies = []
    with httpx.Client(base_url=f"http://127.0.0.1:{PORT}", timeout=30,
                      headers={"Authorization": f"Bearer {token}"}) as client:
        for _ in range(20):  # warm up: connections, the token's last use
            client.get(PING_PATH).raise_for_status()
        before = cpu_reading(pids)
        for _ in range(PING_REQUESTS):
            began = time.perf_counter()
            client.get(PING_PATH).raise_for_status()
            latencies.append((time.perf_counter() - began) * 1000)
        after = cpu_reading(pids)
    per_request = {name: round((after[name] - before[name]) * 1000 / PING_REQUESTS, 2)
                   for name in SAM_PROCESSES}
    return {"path": PING_PATH, "requests": PING_REQUESTS, "cpu_ms": per_request,
            "cpu_ms_total": round(sum(per_request.values()), 2),
            "wall_ms_p50": pct(latencies, 50), "wall_ms_p95": pct(latencies, 95)}


def run_configuration(plan: Plan, *, token: str, space_id: int) -> dict:
    from django.conf import settings

    label = plan.label
    load_before = os.getloadavg()
    since = time.time()
    server = start([str(Path(sys.executable).with_name("gunicorn")), "-c", "samsite/gunicorn_conf.py",
                    "samsite.wsgi", "--log-level", "warning"],
                   {"SAM_PORT": str(PORT), "SAM_WEB_WORKERS": str(plan.web), "SAM_WEB_ACCESS_LOG": "",
                    "SAM_DEBUG": "0"},
                   cwd=plan.checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    cluster = start([sys.executable, "manage.py", "qcluster"], {"SAM_Q_WORKERS": str(Q_WORKERS)},
                    cwd=plan.checkout, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workdir = Path(tempfile.mkdtemp(prefix="load-mix-"))
    try:
        wait_until_up(server, token)
        # Jobs an earlier benchmark left queued in this store would otherwise run during
        # the window (seen once: 2,000 stale embedding jobs); let the cluster clear them first.
        stale = queued_jobs()
        began = time.monotonic()
        while queued_jobs() and time.monotonic() - began < plan.drain_limit:
            time.sleep(1)
        config = {"host": f"http://127.0.0.1:{PORT}", "token": token, "label": label, "users": plan.users,
                  "seconds": plan.seconds, "warmup": plan.warmup, "seed": plan.seed, "track": plan.track,
                  "executions": start_executions(token, label, plan.users), "out": str(workdir / "out.json")}
        (workdir / "config.json").write_text(json.dumps(config))
        locust = start([sys.executable, __file__, "--locust-child", str(workdir / "config.json")], {},
                       stdout=subprocess.PIPE, text=True)
        pids = {"web": server.pid, "worker": cluster.pid, "locust": locust.pid,
                "postgres": postmaster_pid(Path(settings.SAM_EMBEDDED_DB_DIR))}
        readings, at_end, window_start = {}, {}, time.time()
        assert locust.stdout is not None
        for line in locust.stdout:
            marker = line.strip()
            if marker in ("MEASURE-START", "MEASURE-END"):
                readings[marker] = (time.monotonic(), cpu_reading(pids))
                if marker == "MEASURE-START":
                    window_start = time.time()
                if marker == "MEASURE-END":
                    at_end = backlog(space_id, since)
        if locust.wait() != 0 or len(readings) != 2:
            raise SystemExit(f"locust failed (exit {locust.returncode})")
        drained = drain(space_id, since, plan.drain_limit)
        lag = job_lag(window_start)
        ping = ping_overhead(token, {name: pids[name] for name in SAM_PROCESSES})
    finally:
        stop(server)
        stop(cluster)
    removed = remove_written(space_id)
    record = json.loads((workdir / "out.json").read_text())
    return summarise(plan, record, readings, extra={
        "loadavg_before": [round(x, 2) for x in load_before], "stale_jobs_before": stale,
        "backlog_at_end": at_end, "job_lag_seconds": lag,
        "drain_seconds": drained, "memories_removed_after": removed, "trivial_get": ping})


def summarise(plan: Plan, record: dict, readings: dict, *, extra: dict) -> dict:
    from memories.embeddings.worker_threads import web_blas_threads  # Django is set up by now
    (t0, cpu0), (t1, cpu1) = readings["MEASURE-START"], readings["MEASURE-END"]
    wall = t1 - t0
    cores = {name: round((cpu1[name] - cpu0[name]) / wall, 2) for name in cpu0}
    cores["other"] = round(cores["machine"] - sum(v for k, v in cores.items() if k != "machine"), 2)
    per_type = {}
    for name in MIX:
        values = record["latencies"][name]
        per_type[name] = {"n": len(values), "rps": round(len(values) / plan.seconds, 2),
                          "errors": record["errors"][name], "p50": pct(values, 50), "p95": pct(values, 95),
                          "p99": pct(values, 99)}
    stages = record["stages"]
    names = sorted({k for s in stages for k in s if k != "total"})
    totals = [s["total"] for s in stages]
    recall_http = record["latencies"]["recall"]
    requests = sum(t["n"] for t in per_type.values())
    # CPU per request of the mix, by process tree: the figure a shared machine leaves steady.
    cpu_ms = {name: round((cpu1[name] - cpu0[name]) * 1000 / requests, 1) if requests else None
              for name in ("web", "postgres", "worker", "locust")}
    cpu_ms["sam"] = round(sum(cpu_ms[name] or 0.0 for name in SAM_PROCESSES), 1)
    return {
        "variant": plan.variant, "checkout": str(plan.checkout),
        "web_workers": plan.web, "users": plan.users, "seconds": plan.seconds,
        # As gunicorn's post_fork hook sizes it (memories/embeddings/worker_threads.py).
        "web_blas_threads": web_blas_threads(workers=plan.web,
                                             threads=int(os.environ.get("SAM_WEB_THREADS") or 2)),
        "requests": sum(t["n"] for t in per_type.values()),
        "rps": round(sum(t["n"] for t in per_type.values()) / plan.seconds, 1),
        "errors": sum(t["errors"] for t in per_type.values()), "error_samples": record["error_samples"],
        "per_type": per_type,
        "recall_server_ms": {"mean": round(statistics.mean(totals), 1) if totals else None,
                             "p50": pct(totals, 50), "p95": pct(totals, 95)},
        # HTTP round trip minus the pipeline: waiting for a free gunicorn thread (and the
        # GIL), Django and DRF around the view, serialising, loopback and locust's own delay.
        "recall_outside_pipeline_mean_ms": (round(statistics.mean(recall_http) - statistics.mean(totals), 1)
                                            if totals and recall_http else None),
        "recall_stage_mean_ms": dict(sorted(
            ((n, round(statistics.mean(s.get(n, 0) for s in stages), 2)) for n in names),
            key=lambda kv: -kv[1])),
        "cpu_cores_used": cores, "cpu_ms_per_request": cpu_ms, **extra,
    }


def fmt(t: dict) -> str:
    return f"{t['p50']} / {t['p95']} / {t['p99']}"


def tables(results: dict) -> str:
    lines = ["| code | web procs | users | req/s | errors | recall req/s | recall p50 / p95 / p99 ms | "
             "create p50 / p95 / p99 | PRD event p50 / p95 / p99 | CPU cores: web / worker / Postgres / "
             "locust / other |", "|" + "---|" * 10]
    for c in results["configurations"]:
        t, cpu = c["per_type"], c["cpu_cores_used"]
        cores = " / ".join(str(cpu[name]) for name in ("web", "worker", "postgres", "locust", "other"))
        lines.append(f"| {c.get('variant', 'change')} | {c['web_workers']} | {c['users']} | {c['rps']} | "
                     f"{c['errors']} | {t['recall']['rps']} | {fmt(t['recall'])} | {fmt(t['create'])} | "
                     f"{fmt(t['prd_event'])} | {cores} |")
    lines += ["", "| code | web procs | users | CPU ms per request: web / Postgres / worker = SAM | "
              "trivial GET: CPU ms (web / Postgres) and wall p50 |", "|" + "---|" * 5]
    for c in results["configurations"]:
        cpu, ping = c["cpu_ms_per_request"], c["trivial_get"]
        lines.append(f"| {c['variant']} | {c['web_workers']} | {c['users']} | "
                     f"{cpu['web']} / {cpu['postgres']} / {cpu['worker']} = **{cpu['sam']}** | "
                     f"{ping['cpu_ms']['web']} / "
                     f"{ping['cpu_ms']['postgres']}, {ping['wall_ms_p50']} ms |")
    lines += ["", "| code | web procs | users | recall HTTP mean | server mean / p95 | "
              "outside the pipeline | largest stages (mean ms) | jobs queued at end | drain s |",
              "|" + "---|" * 9]
    for c in results["configurations"]:
        top = ", ".join(f"{k} {v}" for k, v in list(c["recall_stage_mean_ms"].items())[:6])
        values = c["per_type"]["recall"]
        http = c["recall_server_ms"]["mean"] + c["recall_outside_pipeline_mean_ms"] if values["n"] else None
        lines.append(f"| {c.get('variant', 'change')} | {c['web_workers']} | {c['users']} | "
                     f"{round(http, 1) if http else '-'} | "
                     f"{c['recall_server_ms']['mean']} / {c['recall_server_ms']['p95']} | "
                     f"{c['recall_outside_pipeline_mean_ms']} | {top} | "
                     f"{c['backlog_at_end']['queued_jobs']} | {c['drain_seconds']} |")
    return "\n".join(lines)


def drive(args: argparse.Namespace) -> None:
    import benchenv  # noqa: F401  (Django set up against var/bench)

    from core.models import Space

    token = setup()
    space_id = Space.objects.get(slug=SPACE).id
    results: dict = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores (locust, SAM and Postgres share them)",
        "python": platform.python_version(), "memories": SIZE, "mix_percent": MIX,
        "web_threads_per_worker": WEB_THREADS, "q_workers": Q_WORKERS, "seconds": args.seconds,
        "warmup_seconds": args.warmup, "seed": args.seed, "track": args.track, "configurations": []}
    if args.baseline:
        results["baseline"] = str(args.baseline.resolve())
    variants = [("change", ROOT), *([("baseline", args.baseline.resolve())] if args.baseline else [])]
    for web in args.web:
        for users in args.users:
            for round_number in range(args.rounds):
                # Alternate who goes first, so neither always meets the machine as the other left it.
                for variant, checkout in variants[::-1] if round_number % 2 else variants:
                    plan = Plan(web=web, users=users, seconds=args.seconds, warmup=args.warmup,
                                seed=args.seed, track=args.track, drain_limit=args.drain,
                                variant=variant, checkout=checkout)
                    results["configurations"].append(run_configuration(plan, token=token, space_id=space_id))
                    print(json.dumps(results["configurations"][-1]), file=sys.stderr, flush=True)
                    # Written after every configuration, so an interrupted run keeps what finished.
                    args.out.parent.mkdir(parents=True, exist_ok=True)
                    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(tables(results))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, nargs="+", default=[2, 4, 8])
    parser.add_argument("--web", type=int, nargs="+", default=[1, 2], help="gunicorn worker processes")
    parser.add_argument("--seconds", type=int, default=60, help="measured window per configuration")
    parser.add_argument("--warmup", type=int, default=10, help="unmeasured load before the window")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--track", action="store_true", help="recall with track: true, as agents' recalls do")
    parser.add_argument("--drain", type=int, default=180, help="longest wait for the worker to catch up")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--rounds", type=int, default=1, help="runs of each configuration per checkout")
    parser.add_argument("--locust-child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.locust_child:
        run_locust(args.locust_child)
    else:
        drive(args)


if __name__ == "__main__":
    main()
