"""Shared start-up for the benchmarks: their own embedded Postgres under var/bench, Django ready.

Import it first: `from benchenv import ROOT` (bench/ is on sys.path when a script in it runs).
SAM_BENCH_VAR_DIR names another data folder, for a benchmark whose store must not share
var/bench (bench/scale_1m.py keeps its million rows apart).
"""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# A separate data folder keeps benchmark data out of the development database.
os.environ["SAM_VAR_DIR"] = os.environ.get("SAM_BENCH_VAR_DIR") or str(ROOT / "var" / "bench")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "samsite.settings.base")
os.environ["SAM_LOG_LEVEL"] = "WARNING"
os.environ["SAM_Q_LOG_LEVEL"] = "WARNING"

import django  # noqa: E402

django.setup()
