"""Rules for adding a thought to a thinking chain (pure; no database).

A chain is a numbered list of thoughts (number, content, is_revision, revises, branch_id;
docs/prd.md, "Thinking chains"). Thoughts without a branch form the main line. A branch
starts at an earlier thought (`branch_from`) and sees the lines it grew from up to that
thought. A revision names an earlier thought it revises, which must be one the new thought
can see: revising a thought on a sibling branch would mix two lines of reasoning.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from prd import limits

BRANCH_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class ThoughtRefused(Exception):
    """The thought does not fit the chain. `conflict` is a 409 (a stale number), else a 400."""

    def __init__(self, message: str, *, field: str, conflict: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.conflict = conflict


@dataclass(frozen=True)
class ThoughtInput:
    content: str
    number: int | None = None
    is_revision: bool | None = None
    revises: int | None = None
    branch_id: str | None = None
    branch_from: int | None = None


def branch_origin(thoughts: list[dict[str, Any]], branch_id: str) -> int | None:
    """The thought a branch grew from (that of its first thought), or None for a new branch."""
    for thought in thoughts:
        if thought.get("branch_id") == branch_id:
            return thought.get("branch_from")
    return None


def visible_numbers(thoughts: list[dict[str, Any]], branch_id: str | None,
                    up_to: int | None = None) -> set[int]:
    """Numbers of the thoughts a thought on `branch_id` can see (its line and its ancestry)."""
    seen: set[int] = set()
    line, limit = branch_id, up_to
    # Walk up the branch ancestry; each step stops at the thought the branch grew from.
    for _ in range(len(thoughts) + 1):
        seen |= {t["number"] for t in thoughts
                 if t.get("branch_id") == line and (limit is None or t["number"] <= limit)}
        if line is None:
            break
        origin = branch_origin(thoughts, line)
        if origin is None:
            break
        parent = next(t for t in thoughts if t["number"] == origin)
        line, limit = parent.get("branch_id"), origin
    return seen


def next_thought(thoughts: list[dict[str, Any]], new: ThoughtInput) -> dict[str, Any]:
    """The thought to append after `thoughts`, or ThoughtRefused saying which field is wrong."""
    number = len(thoughts) + 1
    if new.number is not None and new.number != number:
        raise ThoughtRefused(
            f"The next thought of this chain is number {number}, not {new.number} "
            "(another thought was added meanwhile?).", field="number", conflict=True,
        )
    if len(thoughts) >= limits.THOUGHTS_MAX:
        raise ThoughtRefused(f"A chain holds at most {limits.THOUGHTS_MAX} thoughts.", field="content",
                             conflict=True)

    branch_id, branch_from = new.branch_id or None, new.branch_from
    existing = False
    if branch_id is None and branch_from is not None:
        raise ThoughtRefused("branch_from needs a branch_id.", field="branch_from")
    if branch_id is not None:
        low, high = limits.BRANCH_ID
        if not low <= len(branch_id) <= high or not BRANCH_ID.match(branch_id):
            raise ThoughtRefused(
                f"A branch id is 1-{limits.BRANCH_ID[1]} letters, digits, '.', '_' or '-'.",
                field="branch_id",
            )
        existing = any(t.get("branch_id") == branch_id for t in thoughts)
        if existing:
            origin = branch_origin(thoughts, branch_id)
            if branch_from is not None and branch_from != origin:
                raise ThoughtRefused(
                    f"Branch '{branch_id}' grew from thought {origin}, not {branch_from}.",
                    field="branch_from",
                )
            branch_from = origin
        else:
            if branch_from is None:
                raise ThoughtRefused(f"A new branch '{branch_id}' needs branch_from (the thought it "
                                     "grows from).", field="branch_from")
            if not 1 <= branch_from < number:
                raise ThoughtRefused(f"branch_from must name an earlier thought (1-{number - 1}).",
                                     field="branch_from")

    revises = new.revises
    if new.is_revision is True and revises is None:
        raise ThoughtRefused("A revision names the thought it revises (revises).", field="revises")
    if new.is_revision is False and revises is not None:
        raise ThoughtRefused("revises is only for revisions (is_revision true).", field="is_revision")
    if revises is not None:
        if not 1 <= revises < number:
            raise ThoughtRefused(f"revises must name an earlier thought (1-{number - 1}).", field="revises")
        if branch_id is not None and not existing:
            assert branch_from is not None  # a new branch without it was refused above
            # The first thought of a new branch sees the line it grows from, up to the fork.
            visible = visible_numbers(thoughts, _branch_of(thoughts, branch_from), up_to=branch_from)
        else:
            visible = visible_numbers(thoughts, branch_id)
        if revises not in visible:
            raise ThoughtRefused(
                f"Thought {revises} is on another branch; a revision revises a thought of its own "
                "line of reasoning.", field="revises",
            )

    return {
        "number": number,
        "content": new.content,
        "is_revision": revises is not None,
        "revises": revises,
        "branch_id": branch_id,
        "branch_from": branch_from,
    }


def _branch_of(thoughts: list[dict[str, Any]], number: int) -> str | None:
    return next(t.get("branch_id") for t in thoughts if t["number"] == number)


def revisions(thoughts: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(original, revision) pairs, in the order the revisions were made."""
    by_number = {t["number"]: t for t in thoughts}
    return [(by_number[t["revises"]], t) for t in thoughts
            if t.get("is_revision") and t.get("revises") in by_number]
