"""`make run`'s command (samsite/management/commands/sam_up.py), run as a user runs it: it
says "SAM is ready." only once the server answers, and refuses a taken port at once, naming
the port and SAM_PORT, with a non-zero exit."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.conf import settings

from tests.database import database_url

ROOT = Path(settings.BASE_DIR)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _environment(var_dir: Path) -> dict[str, str]:
    """The suite's database and master keys, and a var/ of the test's own: the command
    writes the admin's password and a demo token there, never into the checkout's."""
    environment = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    environment.update({
        "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "samsite.settings.base",
        "SAM_VAR_DIR": str(var_dir), "SAM_MASTER_KEYS_FILE": str(Path(settings.VAR_DIR) / "master_keys"),
        "SAM_Q_WORKERS": "1",
    })
    return environment


def _sam_up(port: int, var_dir: Path, *extra: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "manage.py", "sam_up", "--no-demo", "--port", str(port), *extra],
                            cwd=ROOT, env=_environment(var_dir), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_a_taken_port_is_refused_at_once_naming_the_port_and_sam_port(tmp_path):
    # given another program listening on the port
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        # when SAM is started there
        started = time.monotonic()
        process = _sam_up(port, tmp_path)
        output, _ = process.communicate(timeout=120)
    # then it fails before migrating or serving anything, saying which port and how to move
    assert process.returncode != 0, output
    assert f"Port {port}" in output, output
    assert "SAM_PORT" in output, output
    assert "SAM is ready" not in output
    assert not (tmp_path / "admin_password").exists()  # nothing was set up
    assert time.monotonic() - started < 60


@pytest.mark.django_db(transaction=True)
def test_sam_is_ready_is_printed_only_once_the_server_answers(tmp_path):
    port = _free_port()
    process = _sam_up(port, tmp_path)
    try:
        # when the command says it is ready
        lines: list[str] = []
        watch = selectors.DefaultSelector()
        watch.register(process.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + 240
        while not any("SAM is ready." in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines)
            assert process.poll() is None, "".join(lines) + process.stdout.read()
            if watch.select(timeout=1):
                lines.append(process.stdout.readline())
        # then the server answers at that very moment
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code == 200
        # and the banner that follows shows its address and a token that works there
        while not any("Try:" in line for line in lines):
            assert time.monotonic() < deadline, "".join(lines)
            assert process.poll() is None, "".join(lines) + process.stdout.read()
            if watch.select(timeout=1):
                lines.append(process.stdout.readline())
        banner = "".join(lines)
        assert f"http://127.0.0.1:{port}/api/v1/" in banner
        token = (tmp_path / "demo_api_token").read_text().strip()
        assert token in banner
        answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/spaces/", timeout=10,
                           headers={"Authorization": f"Bearer {token}"})
        assert answer.status_code == 200, answer.text
    finally:
        _stop(process)
    # and Ctrl-C (SIGTERM here) stops it cleanly
    assert process.returncode == 0
