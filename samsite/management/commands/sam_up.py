"""Run SAM: migrate, load demo data, print a login and a token, serve, and run the worker.

`make run` calls this. It starts `runserver` and `qcluster` as child processes and stops
them (and the embedded Postgres, when SAM started it) on Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand

from core import embedded_db
from governance.models import ApiToken, hash_token
from governance.services import api_token_issue

ADMIN_USERNAME = "admin"


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
        call_command("migrate", interactive=False, verbosity=0)
        call_command("sam_schedules", verbosity=0, stdout=open(os.devnull, "w"))  # noqa: SIM115
        if not no_demo:
            call_command("sam_demo", stdout=self.stdout)
            call_command("sam_demo_session", stdout=self.stdout)
        password = self._admin_password()
        token = self._demo_token()
        self._banner(host, port, password, token)
        if setup_only:
            return
        self._serve(host, port, debug)

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

    def _banner(self, host: str, port: int, password: str | None, token: str) -> None:
        base = f"http://{host}:{port}"
        login = (f"{ADMIN_USERNAME} / {password}" if password else
                 f"{ADMIN_USERNAME} / (changed since first run; reset with "
                 f"`manage.py changepassword {ADMIN_USERNAME}`)")
        self.stdout.write(self.style.SUCCESS("\nSAM is ready."))
        self.stdout.write(f"  Admin:       {base}/admin/   login: {login}")
        self.stdout.write(f"  API:         {base}/api/v1/")
        self.stdout.write(f"  API docs:    {base}/api/docs/")
        self.stdout.write(f"  MCP:         {base}/mcp   (streamable HTTP; stdio: manage.py sam_mcp)")
        self.stdout.write(f"  API token:   {token}")
        self.stdout.write(f"  Try:         curl -H 'Authorization: Bearer {token}' {base}/api/v1/memories/\n")

    def _serve(self, host: str, port: int, debug: bool) -> None:
        env = {**os.environ, "SAM_DEBUG": "1" if debug else os.environ.get("SAM_DEBUG", "0")}
        manage = [sys.executable, str(settings.BASE_DIR / "manage.py")]
        children = [
            subprocess.Popen([*manage, "qcluster"], env=env),
            subprocess.Popen([*manage, "runserver", f"{host}:{port}", "--noreload"], env=env),
        ]
        stopping = False

        def stop(signum, frame) -> None:
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(child.poll() is None for child in children):
                time.sleep(0.5)
        finally:
            for child in children:
                if child.poll() is None:
                    # SIGTERM, not SIGINT: a process started in the background inherits
                    # an ignored SIGINT, and both children shut down cleanly on SIGTERM.
                    child.send_signal(signal.SIGTERM)
            for child in children:
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
            if settings.SAM_EMBEDDED_DB_DIR is not None and not os.environ.get("SAM_KEEP_DB"):
                from django.db import connections

                connections.close_all()
                embedded_db.stop(settings.SAM_EMBEDDED_DB_DIR)
                self.stdout.write("SAM stopped (embedded Postgres too).")
