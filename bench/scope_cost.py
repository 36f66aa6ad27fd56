"""What a recall's access scope costs a user in 50 and in 1,000 spaces, naming none: rights
read afresh (a caller signed in by session) against rights kept per rights generation (a token
caller, governance.access).

Uses the store `bench/many_spaces.py build` makes (var/many: users `many-50` and `many-1000`).
Each case runs the pipeline's scope stage 40 times in a request's memo scope, a new actor each
time as a request has; the first 5 are left out.

    .venv/bin/python bench/scope_cost.py [--out bench/results/scope_cost.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ["SAM_BENCH_VAR_DIR"] = str(Path(__file__).resolve().parent.parent / "var" / "many")

from benchenv import ROOT  # sets up Django on var/many
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance import access
from governance.authentication import authenticate_header
from governance.services import api_token_issue
from retrieval.context import RecallContext
from retrieval.pipeline import RecallRequest, _scope

RESULTS = ROOT / "bench" / "results" / "scope_cost.json"
RUNS, WARM = 40, 5


def case(username: str, *, kept: bool) -> dict:
    user = get_user_model().objects.get(username=username)
    _, raw = api_token_issue(user=user, name="scope cost bench")
    header = f"Bearer {raw}".encode()
    request = RecallRequest(context=RecallContext(query="what did we decide"), spaces=())
    cpu, statements, spaces = [], 0, 0
    for _ in range(RUNS):
        # A token caller comes with the rights generation; a session caller without.
        found = authenticate_header(header) if kept else None
        actor = found[0] if found else get_user_model().objects.get(pk=user.pk)
        with access.rights_memoised(), CaptureQueriesContext(connection) as queries:
            start = time.thread_time()
            answer = _scope(actor, request)
            cpu.append((time.thread_time() - start) * 1000)
        statements, spaces = len(queries.captured_queries), len(answer.scope.space_ids)
    return {"user": username, "spaces": spaces, "rights": "kept" if kept else "afresh",
            "web_cpu_ms_p50": round(statistics.median(cpu[WARM:]), 2), "statements": statements}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    rows = [case(username, kept=kept) for username in ("many-50", "many-1000") for kept in (False, True)]
    args.out.write_text(json.dumps({"machine": f"{os.cpu_count()} cores", "cases": rows}, indent=2) + "\n")
    print("| spaces held | rights | scope web CPU p50 | statements |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['spaces']:,} | {row['rights']} | {row['web_cpu_ms_p50']} ms | {row['statements']} |")


if __name__ == "__main__":
    main()
