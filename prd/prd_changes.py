"""What changed in a PRD between two runs of its execution (pure; no database).

SAM does not parse PRDs (docs/prd.md, "Executions"). The agent that reads the PRD sends its
content hash and, if it likes, its requirements as [{id, title, hash}]; this compares them
with what the previous run sent and says which requirements with progress are affected.
"""

from __future__ import annotations

from typing import Any

Snapshot = dict[str, Any]  # {"hash": str, "title": str, "requirements": [{id, title, hash}] | None}


def _by_id(requirements: list[dict[str, str]] | None) -> dict[str, dict[str, str]]:
    return {r["id"]: r for r in requirements or []}


def compare(before: Snapshot | None, after: Snapshot, *, progress: dict[str, list[str]]) -> dict[str, Any]:
    """The change report stored on a run and served in the resume context.

    `before` is None on the first run. Requirements are compared only when this run sent
    them; a hash is compared only when both runs sent one.
    """
    report: dict[str, Any] = {
        "first_run": before is None, "changed": False, "hash": None, "title": None,
        "requirements_added": [], "requirements_removed": [], "requirements_modified": [],
        "affected": {},
    }
    if before is None:
        return report
    if before["hash"] and after["hash"] and before["hash"] != after["hash"]:
        report["hash"] = {"before": before["hash"], "after": after["hash"]}
    if after["title"] != before["title"]:
        report["title"] = {"before": before["title"], "after": after["title"]}
    if after["requirements"] is not None:
        old, new = _by_id(before["requirements"]), _by_id(after["requirements"])
        report["requirements_added"] = [r for r in new if r not in old]
        report["requirements_removed"] = [r for r in old if r not in new]
        report["requirements_modified"] = [
            r for r in new if r in old and (
                (new[r].get("hash") or "") != (old[r].get("hash") or "")
                or (new[r].get("title") or "") != (old[r].get("title") or "")
            )
        ]
    touched = set(report["requirements_removed"]) | set(report["requirements_modified"])
    report["affected"] = {
        state: [r for r in progress.get(state, []) if r in touched]
        for state in ("completed", "in_progress", "blocked")
        if any(r in touched for r in progress.get(state, []))
    }
    report["changed"] = bool(report["hash"] or report["title"] or touched or report["requirements_added"])
    return report
