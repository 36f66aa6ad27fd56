"""The lanes of `make test` (tests/lanes): the Redis lane's server comes with the pinned
requirements, and a lane this machine cannot run says so (skipped, or failed under CI)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from tests.lanes.servers import redis_binary

ROOT = Path(settings.BASE_DIR)


def _lane(**env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if key != "CI"}
    return subprocess.run([sys.executable, "-m", "tests.lanes", "redis"], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, env={**environment, **env})


def test_the_redis_lane_has_a_server_from_the_requirements():
    binary = redis_binary()
    assert binary is not None
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30)
    assert version.returncode == 0
    assert "v=" in version.stdout


def test_a_machine_without_redis_skips_the_lane_saying_why():
    answer = _lane(SAM_REDIS_SERVER="no-such-redis-server")
    assert answer.returncode == 0, answer.stderr
    assert "lane redis SKIPPED: no Redis server here" in answer.stdout


def test_under_ci_a_lane_that_cannot_run_fails():
    answer = _lane(SAM_REDIS_SERVER="no-such-redis-server", CI="true")
    assert answer.returncode == 1
    assert "lane redis FAILED: no Redis server here" in answer.stdout
