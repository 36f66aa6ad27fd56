"""The embedded Postgres starts with the first connection, not when settings are imported:
commands that never touch the database start nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def manage(var_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    env.update(SAM_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="samsite.settings.base")
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120, check=True)


def test_commands_that_need_no_database_start_none(tmp_path):
    assert manage(tmp_path, "sam_db", "status").stdout.strip() == "not running"
    manage(tmp_path, "check")
    assert not (tmp_path / "pgdata").exists()


# A process that holds a connection open: prints its backend pid and the postmaster's, then
# waits for a line on stdin and answers with the same connection.
HOLDER = """
import sys
from django.db import connection
with connection.cursor() as cur:
    cur.execute("SELECT pg_backend_pid(), current_setting('shared_buffers')")
    pid, buffers = cur.fetchone()
print("held", pid, buffers, flush=True)
sys.stdin.readline()
with connection.cursor() as cur:
    cur.execute("SELECT pg_backend_pid(), 1 + 1")
    print("held", *cur.fetchone(), flush=True)
"""

CHECK = """
import json
from pathlib import Path
from django.conf import settings
from core import embedded_db
server = embedded_db.server_for(Path(settings.SAM_EMBEDDED_DB_DIR))
print(json.dumps([[m.name, m.running, m.wanted, m.needs_restart] for m in embedded_db.check_settings(
    server, {"max_connections": "50", "shared_buffers": "18432", "work_mem": "16384kB",
             "maintenance_work_mem": "1GB"})]))
"""


def sam_env(var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SAM_PG_SHARED_BUFFERS")}
    env.update(SAM_VAR_DIR=str(var_dir), DJANGO_SETTINGS_MODULE="samsite.settings.base",
               SAM_LOG_FORMAT="plain", **extra)
    return env


def held_line(holder: subprocess.Popen) -> list[str]:
    # Start-up chatter (initdb's output) may come first on stdout.
    assert holder.stdout is not None
    for line in holder.stdout:
        if line.startswith("held "):
            return line.split()[1:]
    raise AssertionError(holder.stderr.read() if holder.stderr else "holder exited")


def postmaster_pid(data_dir: Path) -> int:
    return int((data_dir / "postmaster.pid").read_text().splitlines()[0])


def test_a_second_process_with_other_settings_keeps_the_running_server(tmp_path):
    """Given Postgres started by one process with shared_buffers=144MB and a connection it
    holds open, when a second process wants 160MB, then the server is not restarted: the
    first connection still answers from the same backend, the postmaster is the same, and
    the second process logs what differs and how to apply it."""
    from core import embedded_db

    data_dir = tmp_path / "pgdata"
    holder = subprocess.Popen(
        [sys.executable, "manage.py", "shell", "-c", HOLDER], cwd=ROOT, text=True,
        env=sam_env(tmp_path, SAM_PG_SHARED_BUFFERS="144MB"),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdin is not None
        backend_pid, buffers = held_line(holder)
        # The starter applied its own value (with the restart it needs) before anyone used it.
        assert buffers == "144MB"
        postmaster_before = postmaster_pid(data_dir)

        second = subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", CHECK], cwd=ROOT, capture_output=True,
            text=True, timeout=120, check=True, env=sam_env(tmp_path, SAM_PG_SHARED_BUFFERS="160MB"),
        )

        postmaster_after = postmaster_pid(data_dir)
        holder.stdin.write("go\n")
        holder.stdin.flush()
        same_pid, answer = held_line(holder)
        assert holder.wait(timeout=60) == 0, holder.stderr.read() if holder.stderr else ""
    finally:
        if holder.poll() is None:
            holder.kill()
        embedded_db.stop(data_dir)

    assert (same_pid, answer) == (backend_pid, "2")
    assert postmaster_after == postmaster_before
    warning = [line for line in second.stderr.splitlines() if "WARNING core.embedded_db" in line]
    assert len(warning) == 1, second.stderr
    assert "shared_buffers=144MB" in warning[0]
    assert "shared_buffers=160MB" in warning[0]
    assert "SAM_PG_SHARED_BUFFERS=160MB" in warning[0]
    assert "start it again" in warning[0]
    # Restart-only settings other than shared_buffers are found the same way; equal values
    # written in other units (18432 pages of 8 kB = 144MB, 16384kB = 16MB) are not reported.
    assert json.loads(second.stdout.strip().splitlines()[-1]) == [
        ["max_connections", "100", "50", True], ["maintenance_work_mem", "512MB", "1GB", False],
    ]

