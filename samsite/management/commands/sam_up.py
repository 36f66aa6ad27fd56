"""Run SAM: migrate, load demo data, serve, run the worker, and print a login and a token.

`make run` calls this. It starts `runserver` and `qcluster` as child processes and stops
them (and the embedded Postgres, when this run started it) on Ctrl-C or SIGTERM.

"SAM is ready." is printed only once the server answers `/healthz`; a port another program
holds is refused before anything starts, naming the port and `SAM_PORT`, and any failure
(the server or the worker stopping by itself) exits non-zero.
"""

from __future__ import annotations

import errno
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from core import embedded_db
from governance.models import ApiToken, hash_token
from governance.services import api_token_issue

ADMIN_USERNAME = "admin"
# How long the server may take to answer its first request (it loads the app, not the model).
READY_TIMEOUT_SECONDS = 120


def port_taken(host: str, port: int) -> bool:
    """Whether something already listens on `host:port` (binding it is refused).

    SO_REUSEADDR as the server sets it, so a port left in TIME_WAIT by a SAM that just
    stopped does not count as taken.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                return True
            raise
    return False


def _reachable(host: str) -> str:
    """The address to ask for a server bound to `host` (a wildcard is reached on loopback)."""
    return {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}.get(host, host)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


class Command(BaseCommand):
    help = "Set up and run SAM: server, admin and job worker, with demo data."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--host", default=os.environ.get("SAM_HOST", "127.0.0.1"))
        parser.add_argument("--port", type=int, default=int(os.environ.get("SAM_PORT", "8000")))
        parser.add_argument("--debug", action="store_true", help="Run with DEBUG on.")
        parser.add_argument("--no-demo", action="store_true", help="Skip the demo data.")
        parser.add_argument("--setup-only", action="store_true",
                            help="Migrate, load demo data and print credentials, then exit.")

    def handle(self, *args, host: str, port: int, debug: bool, no_demo: bool, setup_only: bool,
               **options) -> None:
        # Before anything slow: a taken port would otherwise surface only after the migrations
        # and the demo data, as a server that dies at once.
        if not setup_only and port_taken(host, port):
            raise CommandError(
                f"Port {port} on {host} is already in use (another SAM, or another program). "
                f"Stop it, or run SAM on another port: SAM_PORT={port + 1} make run "
                f"(SAM_HOST and SAM_PORT choose where SAM listens).")
        call_command("migrate", interactive=False, verbosity=0)
        call_command("sam_schedules", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
        if not no_demo:
            call_command("sam_demo", stdout=self.stdout)
            call_command("sam_demo_session", stdout=self.stdout)
        password = self._admin_password()
        token = self._demo_token()
        if setup_only:
            self._banner(host, port, password, token,
                         heading="SAM is set up (not serving: `make run` serves it at the addresses below).")
            return
        self._serve(host, port, debug,
                    announce=lambda: self._banner(host, port, password, token, heading="SAM is ready."))

    def _admin_password(self) -> str | None:
        """The admin's password: generated on first run and kept in var/ (mode 0600).

        If someone changed it since, it is not known and not printed.
        """
        User = get_user_model()
        secret_file = settings.VAR_DIR / "admin_password"
        admin = User.objects.filter(username=ADMIN_USERNAME).first()
        if admin is None:
            password = os.environ.get("SAM_ADMIN_PASSWORD") or secrets.token_urlsafe(12)
            User.objects.create_superuser(ADMIN_USERNAME, email="", password=password)
            _write_private(secret_file, password)
            return password
        if secret_file.exists():
            password = secret_file.read_text().strip()
            if admin.check_password(password):
                return password
        return None

    def _demo_token(self) -> str:
        """An API token for the admin, reused across runs while it stays valid."""
        User = get_user_model()
        token_file = settings.VAR_DIR / "demo_api_token"
        if token_file.exists():
            raw = token_file.read_text().strip()
            if ApiToken.objects.usable().filter(key_hash=hash_token(raw)).exists():
                return raw
        admin = User.objects.get(username=ADMIN_USERNAME)
        _, raw = api_token_issue(user=admin, name="demo (sam_up)")
        _write_private(token_file, raw)
        return raw

    def _banner(self, host: str, port: int, password: str | None, token: str, *, heading: str) -> None:
        base = f"http://{_url_host(host)}:{port}"
        login = (f"{ADMIN_USERNAME} / {password}" if password else
                 f"{ADMIN_USERNAME} / (changed since first run; reset with "
                 f"`manage.py changepassword {ADMIN_USERNAME}`)")
        self.stdout.write(self.style.SUCCESS(f"\n{heading}"))
        self.stdout.write(f"  Admin:       {base}/admin/   login: {login}")
        self.stdout.write(f"  My memory:   {base}/me/   (every user; sign in at {base}/sign-in/)")
        self.stdout.write(f"  API:         {base}/api/v1/")
        self.stdout.write(f"  API docs:    {base}/api/docs/")
        self.stdout.write(f"  MCP:         {base}/mcp   (streamable HTTP; stdio: manage.py sam_mcp)")
        self.stdout.write(f"  API token:   {token}")
        self.stdout.write(f"  Try:         curl -H 'Authorization: Bearer {token}' {base}/api/v1/memories/\n")
        self.stdout.flush()  # seen at once when the output goes to a pipe or a file, not at exit

    def _serve(self, host: str, port: int, debug: bool, *, announce: Callable[[], None]) -> None:
        """Run the server and the worker until Ctrl-C or SIGTERM; `announce` once the server
        answers. Raises CommandError (exit 1) when either stops by itself."""
        env = {**os.environ, "SAM_DEBUG": "1" if debug else os.environ.get("SAM_DEBUG", "0")}
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        address = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        worker = subprocess.Popen([*manage, "qcluster"], env=env)
        server = subprocess.Popen([*manage, "runserver", address, "--noreload"], env=env)
        children = {"the job worker (qcluster)": worker, "the web server (runserver)": server}
        stopping = False

        def stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        failure = None
        try:
            health = f"http://{_url_host(_reachable(host))}:{port}/healthz"
            deadline = time.monotonic() + READY_TIMEOUT_SECONDS
            announced = False
            while not stopping:
                ended = [name for name, child in children.items() if child.poll() is not None]
                if ended:
                    code = children[ended[0]].returncode
                    failure = (f"{ended[0]} stopped (exit code {code}); SAM stopped too. If it said "
                               f"the port is in use, choose another: SAM_PORT={port + 1}.")
                    break
                if not announced:
                    if _answers(health):
                        announce()
                        announced = True
                        continue
                    if time.monotonic() > deadline:
                        failure = (f"The web server did not answer {health} within "
                                   f"{READY_TIMEOUT_SECONDS} s; SAM stopped.")
                        break
                    time.sleep(0.2)
                else:
                    time.sleep(0.5)
        finally:
            for child in children.values():
                if child.poll() is None:
                    # SIGTERM, not SIGINT: a process started in the background inherits
                    # an ignored SIGINT, and both children shut down cleanly on SIGTERM.
                    child.send_signal(signal.SIGTERM)
            for child in children.values():
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
            # Only a server this run started: one already running (another SAM, the test
            # suite) is someone else's to stop.
            if (settings.SAM_EMBEDDED_DB_DIR is not None and not os.environ.get("SAM_KEEP_DB")
                    and embedded_db.started_by_this_process(settings.SAM_EMBEDDED_DB_DIR)):
                from django.db import connections

                connections.close_all()
                embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)
                self.stdout.write("SAM stopped (embedded Postgres too).")
        if failure is not None:
            raise CommandError(failure)


def _answers(url: str) -> bool:
    """Whether the server answers `url` with 200 (it listens and its app has loaded)."""
    try:
        # No proxy from the environment: the server is on this machine.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(url, timeout=2) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False
