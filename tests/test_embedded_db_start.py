"""The embedded Postgres starts with the first connection, not when settings are imported:
commands that never touch the database start nothing."""

from __future__ import annotations

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
