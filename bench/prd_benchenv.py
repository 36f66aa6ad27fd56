"""Start-up for the PRD benchmarks: their own embedded Postgres under var/bench_prd, Django
ready, and helpers to run gunicorn and a django-q2 worker against it.

Like bench/benchenv.py, but with a data folder of its own, so these benchmarks never
touch (or wait on) the database the other benchmarks build. Import it first:
`from prd_benchenv import ROOT` (bench/ is on sys.path when a script in it runs).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ["SAM_VAR_DIR"] = str(ROOT / "var" / "bench_prd")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
os.environ["SAM_LOG_LEVEL"] = "WARNING"
os.environ["SAM_Q_LOG_LEVEL"] = "WARNING"

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402

PORT = 8791


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def ms(seconds: float) -> float:
    return round(seconds * 1000, 1)


def start_gunicorn(*, cwd: Path = ROOT, port: int = PORT) -> subprocess.Popen:
    """SAM as production serves it (see README): gunicorn, 1 worker, 2 threads. `cwd` is the
    checkout whose code it serves (another worktree, to measure a baseline beside it)."""
    server = subprocess.Popen(
        [str(Path(sys.executable).with_name("gunicorn")), "samsite.wsgi", "--workers", "1",
         "--threads", "2", "--bind", f"127.0.0.1:{port}", "--log-level", "warning"],
        cwd=cwd, env={**os.environ, "SAM_DEBUG": "0"}, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )
    for _ in range(100):
        try:
            httpx.get(f"http://127.0.0.1:{port}/api/schema/", timeout=2)
            return server
        except httpx.HTTPError:
            time.sleep(0.3)
    stop(server)
    raise RuntimeError("gunicorn did not start")


def start_worker(**env: str) -> subprocess.Popen:
    """A real django-q2 cluster (`manage.py qcluster`) with the configured workers and poll."""
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "qcluster"], cwd=ROOT, env={**os.environ, **env},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the main process only: it stops its own workers."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def stop_database_if_started() -> None:
    """Leave no embedded Postgres behind that this run started (a running one is left alone)."""
    from django.conf import settings
    from django.db import connections

    from core import embedded_db

    data_dir = settings.SAM_EMBEDDED_DB_DIR
    if data_dir is not None and embedded_db.started_by_this_process(data_dir):
        connections.close_all()
        embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)
