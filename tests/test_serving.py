"""Serving with the shipped gunicorn config (samsite/gunicorn_conf.py): instances side by
side, and web processes that size numpy's BLAS pool for the cores they share."""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
from django.conf import settings
from threadpoolctl import threadpool_info, threadpool_limits

from governance.services import api_token_issue
from memories.embeddings import worker_threads
from tests.database import database_url
from tests.factories import UserFactory

ROOT = Path(settings.BASE_DIR)
GUNICORN = Path(sys.executable).with_name("gunicorn")



def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(port: int, home: Path) -> subprocess.Popen:
    environment = {key: value for key, value in os.environ.items() if key != "XDG_RUNTIME_DIR"}
    environment.update({
        "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "samsite.settings.base",
        # gunicorn's default control socket lives under $HOME: a home of the test's own
        # shows whether an instance makes one, and keeps the user's real one untouched.
        "HOME": str(home), "SAM_PORT": str(port), "SAM_WEB_WORKERS": "1", "SAM_WEB_ACCESS_LOG": "",
    })
    return subprocess.Popen([str(GUNICORN), "-c", "samsite/gunicorn_conf.py", "samsite.wsgi"], cwd=ROOT,
                            env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)  # the arbiter stops its own workers
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _answer(port: int, token: str, process: subprocess.Popen, *, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"gunicorn on {port} exited: {process.stderr.read().decode()[-2000:]}")
        try:
            return httpx.get(f"http://127.0.0.1:{port}/api/v1/spaces/", timeout=5,
                             headers={"Authorization": f"Bearer {token}"}).status_code
        except httpx.TransportError:
            time.sleep(0.3)
    raise AssertionError(f"gunicorn on {port} did not answer")


@pytest.mark.django_db(transaction=True)
def test_two_instances_with_the_shipped_config_run_side_by_side(tmp_path):
    # given a token the servers can read (committed: they have their own connections)
    _, token = api_token_issue(user=UserFactory(username="gunicorn-twins"), name="tests")
    first_port, second_port = _free_port(), _free_port()
    first = _start(first_port, tmp_path)
    second = _start(second_port, tmp_path)
    try:
        # when both run at once, then both answer
        assert _answer(first_port, token, first) == 200
        assert _answer(second_port, token, second) == 200
        # and neither made the per-user control socket the other would take over
        assert not (tmp_path / ".gunicorn" / "gunicorn.ctl").exists()
        # so stopping one leaves the other serving
        _stop(first)
        assert _answer(second_port, token, second) == 200
    finally:
        _stop(first)
        _stop(second)


def _blas_threads() -> set[int]:
    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


@pytest.fixture
def restore_blas_pool():
    import numpy  # noqa: F401  (its BLAS pool is listed once loaded)

    before = max(_blas_threads())
    yield
    threadpool_limits(limits=before, user_api="blas")
    worker_threads._web_limit_applied = False


def _gunicorn_conf():
    spec = importlib.util.spec_from_file_location("sam_gunicorn_conf", ROOT / "samsite" / "gunicorn_conf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_web_default_shares_the_cores_out_among_the_web_workers(settings):
    settings.SAM_WEB_BLAS_THREADS = 0
    assert worker_threads.web_blas_threads(workers=2) == max(1, (os.cpu_count() or 1) // 2)
    # Every request thread embeds with the whole pool: the cores go round the threads.
    assert worker_threads.web_blas_threads(workers=1, threads=2) == max(1, (os.cpu_count() or 1) // 2)
    assert worker_threads.web_blas_threads(workers=2, threads=2) == max(1, (os.cpu_count() or 1) // 4)
    assert worker_threads.web_blas_threads(workers=64) == 1
    settings.SAM_WEB_WORKERS = 64
    assert worker_threads.web_blas_threads() == 1
    settings.SAM_WEB_BLAS_THREADS = 3
    assert worker_threads.web_blas_threads(workers=64) == 3


def test_a_forked_web_worker_sizes_its_blas_pool(settings, restore_blas_pool):
    # given numpy's pool at two threads, and a config of one BLAS thread per web process
    settings.SAM_WEB_BLAS_THREADS = 1
    threadpool_limits(limits=2, user_api="blas")
    assert _blas_threads() == {2}
    # when gunicorn runs the config's post_fork hook in a new worker
    _gunicorn_conf().post_fork(SimpleNamespace(cfg=SimpleNamespace(workers=2, threads=2)), None)
    # then this process's BLAS pool has one thread
    assert _blas_threads() == {1}


def test_the_wsgi_import_keeps_the_size_post_fork_chose(settings, restore_blas_pool):
    # given a worker whose post_fork hook sized the pool for the workers gunicorn runs
    settings.SAM_WEB_BLAS_THREADS = 0
    settings.SAM_WEB_WORKERS = 1  # what SAM_WEB_WORKERS says, but `gunicorn -w 64` won
    worker_threads.limit_web_threads(workers=64)
    assert _blas_threads() == {1}
    # when the WSGI module is imported afterwards, then the pool keeps that size
    worker_threads.limit_web_threads(force=False)
    assert _blas_threads() == {1}
