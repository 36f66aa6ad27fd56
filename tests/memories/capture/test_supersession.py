"""Decisions that replace decisions: imported from real history formats across sessions and
sources, the newer one supersedes the older (archived, `superseded_by`) and is recall's answer.

The histories are realistic multi-session ones: a Claude Code project whose second session,
weeks later, switches the index the first one chose; a Cursor store whose later composer
changes the linter's line length. Everything runs for real: the readers, the extractors, the
memory services, the embedding model and the write checks.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command

from memories.models import Memory
from tests.factories import make_memory

HISTORIES = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "supersession"


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("sam_chat_import", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def decisions() -> list[Memory]:
    return [m for m in Memory.objects.order_by("occurred_at") if m.kind == "decision"]


@pytest.fixture
def capturing(space):
    space.capture_sources = ["claude_code", "cursor"]
    space.save()
    return space


def recall_first(api, query: str) -> str:
    """The id of recall's first answer."""
    response = api.post("/api/v1/recall/", {"query": query, "spaces": ["webshop"], "track": False},
                        format="json")
    assert response.status_code == 200, response.content
    return response.json()["data"]["ranked_memory_list"][0]["id"]


def test_a_later_session_s_decision_supersedes_the_earlier_one(api, capturing, on_commit):
    with on_commit():
        run("claude_code", str(HISTORIES / "claude_code"), "--space", "webshop")

    older, newer = decisions()
    assert "B-tree index on orders.created_at" in older.content
    assert "BRIN" in newer.content
    assert older.archived
    assert older.superseded_by_id == newer.id
    assert not newer.archived
    assert recall_first(api, "which index is on orders.created_at?") == newer.id


def test_an_old_history_imported_late_does_not_overrule_what_was_said_since(api, capturing, on_commit):
    project = HISTORIES / "claude_code" / "-home-dev-shop"
    later, earlier = sorted(project.glob("7c9e*.jsonl")), sorted(project.glob("0f3d*.jsonl"))
    with on_commit():
        run("claude_code", str(later[0]), "--space", "webshop")
    with on_commit():
        run("claude_code", str(earlier[0]), "--space", "webshop")

    older, newer = decisions()  # by when they were said, not when they were imported
    assert "B-tree" in older.content
    assert "BRIN" in newer.content
    assert older.archived
    assert older.superseded_by_id == newer.id
    assert not newer.archived


def cursor_store(path: Path) -> Path:
    """Two composers a fortnight apart: the team's line length, then a change of it."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    composers = {
        "lint-1": (1772445600000, [
            (1, "ruff keeps reformatting the long SQL strings in reports.py, annoying"),
            (2, "You can exclude the file or raise the line length in pyproject.toml."),
            (1, "we decided to keep the ruff line length at 88 for the whole repo, I'll wrap the strings"),
            (2, "Makes sense. Black-compatible 88 it is.")]),
        "lint-2": (1773655200000, [
            (1, "the wrapped strings are unreadable"),
            (2, "A longer limit would help; many teams use 100 or 120."),
            (1, "ok we're switching the ruff line length to 100 for the whole repo, please update pyproject"),
            (2, "Updated `line-length = 100` in pyproject.toml.")]),
    }
    for composer, (created, bubbles) in composers.items():
        conversation = [{"type": kind, "bubbleId": f"{composer}-{n}", "text": text,
                         "createdAt": created + n * 60000}
                        for n, (kind, text) in enumerate(bubbles)]
        value = {"_v": 3, "composerId": composer, "name": "ruff", "createdAt": created,
                 "conversation": conversation}
        db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", [f"composerData:{composer}", json.dumps(value)])
    db.commit()
    db.close()
    return path


def test_a_later_cursor_chat_changes_the_team_s_line_length(api, capturing, on_commit, tmp_path):
    with on_commit():
        run("cursor", str(cursor_store(tmp_path / "state.vscdb")), "--space", "webshop")

    older, newer = decisions()
    assert "88" in older.content
    assert "100" in newer.content
    assert older.archived
    assert older.superseded_by_id == newer.id
    assert recall_first(api, "what is the ruff line length?") == newer.id


def test_two_decisions_about_different_things_both_stand(capturing, on_commit, tmp_path):
    history = tmp_path / "history.jsonl"
    history.write_text("".join(json.dumps({"conversation_id": cid, "role": "user", "content": text,
                                           "time": f"2026-03-0{day}T10:00:00Z"}) + "\n"
                               for cid, day, text in (
                                   ("a", 1, "let's go with GitHub Actions for CI, it is where the code is"),
                                   ("b", 5, "we're switching the staging database to Postgres 16, "
                                            "the extensions need it"))))
    capturing.capture_sources = ["jsonl"]
    capturing.save()
    with on_commit():
        run("jsonl", str(history), "--space", "webshop")

    assert [m.archived for m in decisions()] == [False, False]


@pytest.mark.parametrize(("older", "newer"), [
    # "migration", "dropdown", "change" (a noun) announce no change of decision.
    ("Standard: every migration on the orders table must be reversible.",
     "Standard: any change to the orders table schema needs a reviewed migration."),
    ("Decision: the signup form uses a dropdown from Radix for the country picker.",
     "Decision: the country picker dropdown sorts countries by name."),
])
def test_decisions_that_share_words_but_announce_no_change_both_stand(space, on_commit, older, newer):
    for content in (older, newer):
        with on_commit():
            make_memory(space, title=content[:40], content=content, kind=content.split(":")[0].lower())

    assert [m.archived for m in Memory.objects.order_by("created_at")] == [False, False]
