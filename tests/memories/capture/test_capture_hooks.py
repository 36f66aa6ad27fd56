"""Capture that runs by itself: SAM's Claude Code hooks against a live SAM, and their install.

The hooks run as Claude Code runs them: the command `sam_hooks install` wrote into
.claude/settings.json, through a shell, with the system's python3 (not SAM's virtualenv) and
the hook JSON on stdin. The transcript is a recorded Claude Code session written by hand.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from rest_framework.test import APIClient

from governance.services import api_token_issue
from memories.models import ChatImport, Memory
from tests.factories import SpaceFactory, UserFactory

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "chat" / "claude_code_hook"
SESSION = "7e1d5a2c-3b4f-4c6d-9e8f-1a2b3c4d5e6f"
SYSTEM_PYTHON = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or "python3"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def hook_command(project: Path, event: str) -> str:
    """The command Claude Code would run: read back from the project's settings.json."""
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    [command] = [h["command"] for group in settings["hooks"][event] for h in group["hooks"]
                 if "sam_hook.py" in h["command"]]
    return command


def run_hook(project: Path, home: Path, event: str, payload: dict, **env: str) -> subprocess.CompletedProcess:
    environment = {"PATH": f"{Path(SYSTEM_PYTHON).parent}:/usr/bin:/bin", "HOME": str(home),
                   "CLAUDE_PROJECT_DIR": str(project), **env}
    return subprocess.run(["bash", "-c", hook_command(project, event)], input=json.dumps(payload), text=True,
                          capture_output=True, env=environment, cwd=project, timeout=60)


def end_event(project: Path, transcript: Path) -> dict:
    return {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(project),
            "hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}


def start_event(project: Path) -> dict:
    return {"session_id": SESSION, "transcript_path": "", "cwd": str(project),
            "hook_event_name": "SessionStart", "source": "startup"}


@pytest.fixture
def sam(transactional_db, live_server):
    """A live SAM with a project space that accepts Claude Code sessions, and a real token."""
    owner = UserFactory(username="hook-owner")
    space = SpaceFactory(slug="shop", name="Shop", members={owner: "owner"}, capture_sources=["claude_code"])
    _, token = api_token_issue(user=owner, name="claude-code")
    yield live_server.url, token, space
    # The live server's threads keep connections open, which would keep the test database
    # from being dropped.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")


@pytest.fixture
def project(tmp_path, sam):
    """A project with the hooks installed (`.sam.toml`: url and space) and a home whose
    ~/.config/sam/config.toml holds the token, as the docs say to set it up."""
    url, token, space = sam
    folder, home = tmp_path / "shop", tmp_path / "home"
    folder.mkdir()
    (home / ".config" / "sam").mkdir(parents=True)
    (home / ".config" / "sam" / "config.toml").write_text(f'token = "{token}"\n')
    installed(folder, "install", "--space", space.slug, "--url", url)
    return folder, home


def test_a_session_that_ends_is_imported_once_and_its_decision_is_in_the_space(project, tmp_path):
    folder, home = project
    transcript = tmp_path / "transcripts" / f"{SESSION}.jsonl"
    transcript.parent.mkdir()
    shutil.copy(FIXTURE / f"{SESSION}.jsonl", transcript)

    first = run_hook(folder, home, "SessionEnd", end_event(folder, transcript))

    assert (first.returncode, first.stdout, first.stderr) == (0, "", "")
    chat_import = ChatImport.objects.get()
    assert (chat_import.source, chat_import.space.slug, chat_import.status) == ("claude_code", "shop", "done")
    assert chat_import.file_name == f"{SESSION}.jsonl"
    decision = Memory.objects.get(kind="decision")
    assert decision.content == ("Decided to store money as NUMERIC(12,2) because floats broke the "
                                "invoice totals.")
    assert decision.space.slug == "shop"

    again = run_hook(folder, home, "SessionEnd", end_event(folder, transcript))

    assert again.returncode == 0
    second = ChatImport.objects.exclude(pk=chat_import.pk).get()
    assert (second.report["conversations_skipped"], second.report["memories_created"]) == (1, 0)
    assert Memory.objects.count() == 1

    with transcript.open("a") as handle:  # the session resumed after lunch
        handle.write((FIXTURE / "resumed.jsonl.part").read_text())
    resumed = run_hook(folder, home, "SessionEnd", end_event(folder, transcript))

    assert resumed.returncode == 0
    third = ChatImport.objects.order_by("-created_at").first()
    assert (third.report["exchanges"], third.report["memories_created"]) == (1, 1)
    assert Memory.objects.get(kind="standard").content == "Never run the migrations on production by hand."


def test_the_report_of_a_hook_import_says_it_is_final(project, sam, tmp_path):
    folder, home = project
    _url, token, _ = sam
    run_hook(folder, home, "SessionEnd", end_event(folder, FIXTURE / f"{SESSION}.jsonl"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")

    report = client.get(f"/api/v1/chat-imports/{ChatImport.objects.get().pk}/").json()

    assert (report["extraction_done"], report["memories"], report["final"]) == (True, 1, True)
    assert report["pending"] == {"embedding": 0, "checks": 0}


def test_a_session_that_starts_reads_the_handoff_and_the_boot_pack(project, sam):
    folder, home = project
    _url, token, _ = sam
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    session = client.post("/api/v1/sessions/", {"space": "shop", "key": "monday"}, format="json").json()
    client.post(f"/api/v1/sessions/{session['session']['id']}/events/", {"events": [
        {"event_id": "e1", "event_type": "decision", "text": "Money is stored as NUMERIC(12,2)",
         "data": {"reason": "floats broke the invoice totals"}},
        {"event_id": "e2", "event_type": "handoff", "text": "The decimal migration is merged",
         "data": {"next_steps": ["Backfill the refunds table"],
                  "open_questions": ["Round half up or even?"]}},
    ]}, format="json")

    started = run_hook(folder, home, "SessionStart", start_event(folder))

    assert (started.returncode, started.stderr) == (0, "")
    assert started.stdout.startswith("# What SAM remembers for this project (space `shop`)")
    assert "Backfill the refunds table" in started.stdout
    assert "Round half up or even?" in started.stdout
    assert "# Context pack (boot)" in started.stdout  # then the boot pack: decisions, tasks, memories


def test_with_sam_down_both_hooks_exit_0_and_print_nothing(project, tmp_path):
    folder, home = project
    down = {"SAM_URL": f"http://127.0.0.1:{free_port()}", "SAM_HOOK_TIMEOUT": "3"}

    ended = run_hook(folder, home, "SessionEnd", end_event(folder, FIXTURE / f"{SESSION}.jsonl"), **down)
    started = run_hook(folder, home, "SessionStart", start_event(folder), **down)

    for outcome in (ended, started):
        assert (outcome.returncode, outcome.stdout) == (0, "")
        assert len(outcome.stderr.splitlines()) == 1
        assert "not reachable" in outcome.stderr
    assert not ChatImport.objects.exists()


def test_a_space_that_refuses_the_source_is_one_line_and_exit_0(project, sam):
    folder, home = project
    _, _, space = sam
    space.capture_sources = []
    space.save()

    ended = run_hook(folder, home, "SessionEnd", end_event(folder, FIXTURE / f"{SESSION}.jsonl"))

    assert (ended.returncode, ended.stdout) == (0, "")
    assert ended.stderr.startswith("sam hook session-end: SAM answered 403: Space 'shop' does not accept")
    assert not Memory.objects.exists()


def test_without_a_token_the_hook_says_what_to_set(project):
    folder, home = project
    (home / ".config" / "sam" / "config.toml").unlink()
    (folder / ".sam.toml").write_text((folder / ".sam.toml").read_text() + 'token = "sam_in_the_repo"\n')

    ended = run_hook(folder, home, "SessionEnd", end_event(folder, FIXTURE / f"{SESSION}.jsonl"))

    assert ended.returncode == 0
    # A token in the project's file is not read: project files end up in repositories.
    assert ended.stderr == ("sam hook session-end: not configured: set SAM_TOKEN "
                            "(or ~/.config/sam/config.toml)\n")


# --- install -------------------------------------------------------------------------------------


EXISTING = {
    "permissions": {"allow": ["Bash(npm test:*)"]},
    "hooks": {
        "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo ready"}]}],
        "PostToolUse": [{"matcher": "Edit|Write",
                         "hooks": [{"type": "command", "command": "npx prettier -w"}]}],
    },
}


def installed(folder: Path, *args: str) -> str:
    out = io.StringIO()
    call_command("sam_hooks", *args, str(folder), stdout=out)
    return out.getvalue()


def test_install_keeps_what_the_settings_held_and_twice_is_once(tmp_path):
    folder = tmp_path / "app"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(EXISTING, indent=2))

    said = installed(folder, "install", "--space", "app", "--url", "http://sam.internal:8000")
    again = installed(folder, "install", "--space", "app", "--url", "http://sam.internal:8000")

    settings = json.loads((folder / ".claude" / "settings.json").read_text())
    assert settings["permissions"] == EXISTING["permissions"]
    assert settings["hooks"]["PostToolUse"] == EXISTING["hooks"]["PostToolUse"]
    assert settings["hooks"]["SessionStart"][0] == EXISTING["hooks"]["SessionStart"][0]
    assert [g["hooks"][0]["command"] for g in settings["hooks"]["SessionStart"][1:]] == [
        'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/sam_hook.py" session-start']
    assert [g["hooks"][0]["command"] for g in settings["hooks"]["SessionEnd"]] == [
        'python3 "$CLAUDE_PROJECT_DIR/.claude/hooks/sam_hook.py" session-end']
    assert "added the SessionStart and SessionEnd hooks to .claude/settings.json" in said
    assert "export SAM_TOKEN=" in said
    assert "nothing to do" in again
    rules = (folder / ".cursor" / "rules" / "sam.mdc").read_text()
    assert rules.startswith("---\n")
    assert "\nalwaysApply: true\n" in rules.split("---")[1]
    assert "space `app`" in rules
    assert "`remember`" in rules
    assert "`recall`" in rules
    config = (folder / ".sam.toml").read_text()
    assert 'url = "http://sam.internal:8000"' in config
    assert 'space = "app"' in config
    assert "sam_" not in config.replace("sam_hooks", "")  # no token, ever
    assert os.access(folder / ".claude" / "hooks" / "sam_hook.py", os.X_OK)


def test_uninstall_takes_back_exactly_what_install_added(tmp_path):
    folder = tmp_path / "app"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text(json.dumps(EXISTING, indent=2))
    (folder / ".cursor" / "rules").mkdir(parents=True)
    (folder / ".cursor" / "rules" / "team.mdc").write_text("---\nalwaysApply: true\n---\nUse tabs.\n")
    installed(folder, "install", "--space", "app")

    said = installed(folder, "uninstall")

    assert json.loads((folder / ".claude" / "settings.json").read_text()) == EXISTING
    assert not (folder / ".claude" / "hooks").exists()
    assert not (folder / ".sam.toml").exists()
    assert [p.name for p in (folder / ".cursor" / "rules").iterdir()] == ["team.mdc"]
    assert "removed the SessionStart and SessionEnd hooks from .claude/settings.json" in said


def test_a_project_without_settings_is_left_as_it_was_after_uninstall(tmp_path):
    folder = tmp_path / "bare"
    folder.mkdir()

    installed(folder, "install")
    installed(folder, "uninstall")

    assert list(folder.iterdir()) == []


def test_a_settings_file_that_is_not_json_is_not_touched(tmp_path):
    from django.core.management.base import CommandError

    folder = tmp_path / "broken"
    (folder / ".claude").mkdir(parents=True)
    (folder / ".claude" / "settings.json").write_text("{ not json")

    with pytest.raises(CommandError, match="not valid JSON"):
        installed(folder, "install")
    assert (folder / ".claude" / "settings.json").read_text() == "{ not json"
    assert not (folder / ".claude" / "hooks").exists()


def test_the_config_files_are_read_without_tomllib_too(tmp_path, monkeypatch):
    """Claude Code may find a Python older than 3.11 on PATH: the script reads its simple
    `key = "value"` files without tomllib."""
    import sys

    from memories.capture.hooks import sam_hook

    (tmp_path / ".sam.toml").write_text('# a comment\nurl = "http://sam.internal:8000/api/v1/"\n'
                                        'space = "app"\n')
    monkeypatch.setitem(sys.modules, "tomllib", None)  # what `import tomllib` finds on Python 3.10
    monkeypatch.setenv("SAM_TOKEN", "sam_from_env")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nothing"))
    monkeypatch.delenv("SAM_URL", raising=False)
    monkeypatch.delenv("SAM_SPACE", raising=False)

    assert sam_hook.settings(tmp_path) == {"url": "http://sam.internal:8000", "token": "sam_from_env",
                                           "space": "app"}
