"""`sam_chat_import` from the shell: its exit codes, the README's commands as written on a fresh
install, the watch mode, and reports that say when an import's memories are final."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command

from core.models import Space
from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from governance.models import SpaceMembership
from governance.services import api_token_issue
from memories import tasks
from memories.capture import jobs, selectors
from memories.capture.models import ImportedMemory
from memories.capture.watch import Watcher
from memories.models import ChatImport, ImportedConversation, Memory
from tests.database import database_url
from tests.factories import SpaceFactory, UserFactory
from tests.personas import client_with

ROOT = Path(settings.BASE_DIR)
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "chat"
SESSION = "7e1d5a2c-3b4f-4c6d-9e8f-1a2b3c4d5e6f"


def said(conversation_id: str, text: str) -> str:
    return json.dumps({"conversation_id": conversation_id, "role": "user", "content": text}) + "\n"


def shell_environment(home: Path | None = None) -> dict[str, str]:
    """A shell at the server, on the suite's database (what `make run` would use)."""
    environment = {**os.environ, "DATABASE_URL": database_url(),
                   "DJANGO_SETTINGS_MODULE": "samsite.settings.base"}
    if home is not None:
        environment["HOME"] = str(home)
    return environment


def manage(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "sam_chat_import", *args, "--no-progress"], cwd=ROOT,
                          env=shell_environment(home), capture_output=True, text=True, timeout=180)


@pytest.fixture
def webshop(transactional_db):
    return SpaceFactory(slug="webshop", name="Webshop", capture_sources=["jsonl", "claude_code"])


# --- exit codes ------------------------------------------------------------------------------


def here(capsys, *args: str) -> subprocess.CompletedProcess:
    """The command as the shell runs it (argv in, exit code out), in this process: a second
    Python for each would cost seconds."""
    from memories.management.commands.sam_chat_import import Command

    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "sam_chat_import", *args, "--no-progress"])
    out = capsys.readouterr()
    return subprocess.CompletedProcess(args, exited.value.code, out.out, out.err)


def test_the_exit_code_says_how_an_import_went(webshop, tmp_path, capsys):
    clean = tmp_path / "clean.jsonl"
    clean.write_text(said("c1", "I speak German."))
    webshop_refusing_cursor = tmp_path / "state.vscdb"
    webshop_refusing_cursor.write_bytes(b"")

    ok = manage("jsonl", str(clean), "--space", "webshop")  # one from a real shell
    cut_line = here(capsys, "claude_code", str(FIXTURES / "claude_code"), "--space", "webshop")
    missing = here(capsys, "jsonl", str(tmp_path / "nowhere.jsonl"), "--space", "webshop")
    refused = here(capsys, "cursor", str(webshop_refusing_cursor), "--space", "webshop")
    no_space = here(capsys, "jsonl", str(clean), "--space", "nowhere")
    usage = here(capsys, "slack", str(clean), "--space", "webshop")

    assert ok.returncode == 0, ok.stderr
    assert "1 memories created" in ok.stdout
    assert cut_line.returncode == 1, cut_line.stderr  # imported, but one line could not be read
    assert "line 17: not JSON" in cut_line.stdout
    assert Memory.objects.filter(kind="solution").exists()
    assert missing.returncode == 2
    assert f"Cannot read {tmp_path / 'nowhere.jsonl'}: no such file or folder." in missing.stderr
    assert refused.returncode == 3
    assert "does not accept imports from cursor" in refused.stderr
    assert no_space.returncode == 3
    assert "No space 'nowhere'" in no_space.stderr
    assert usage.returncode == 2  # argparse: not a source


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file whatever its mode")
def test_a_history_that_cannot_be_read_exits_2(webshop, tmp_path):
    locked = tmp_path / "locked.jsonl"
    locked.write_text(said("c1", "I speak German."))
    locked.chmod(0)

    answer = manage("jsonl", str(locked), "--space", "webshop")

    assert answer.returncode == 2
    assert "Permission denied" in answer.stderr


# --- the README's commands, as written, on a fresh install ---------------------------------------


def readme_import_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Importing chat histories", 1)[1].split("\n## ", 1)[0]
    block = section.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if "sam_chat_import" in line]


def clean_cursor_store(path: Path) -> None:
    path.parent.mkdir(parents=True)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    composer = {"_v": 2, "composerId": "c1", "conversation": [
        {"type": 1, "bubbleId": "b1", "text": "I always use pytest-randomly to catch order-dependent tests."},
        {"type": 2, "bubbleId": "b2", "text": "Good habit."}]}
    db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", ["composerData:c1", json.dumps(composer).encode()])
    db.commit()
    db.close()


def test_the_readme_imports_work_as_written_on_a_fresh_install(transactional_db, tmp_path):
    # given what `make run` leaves: its admin, the demo spaces, the admin's token; no space `me`
    admin = get_user_model().objects.create_superuser("admin", email="", password="unused")
    call_command("sam_demo", stdout=io.StringIO())
    _, token = api_token_issue(user=admin, name="demo (sam_up)")
    assert not Space.objects.filter(slug="me").exists()
    # and a person's histories where the README looks for them
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-dev-shop"
    project.mkdir(parents=True)
    shutil.copy(FIXTURES / "claude_code_hook" / f"{SESSION}.jsonl", project)
    shutil.copytree(FIXTURES / "chatgpt_split", home / "Downloads" / "chatgpt-export")
    clean_cursor_store(home / ".config" / "Cursor" / "User" / "globalStorage" / "state.vscdb")
    commands = readme_import_commands()
    assert [c.split()[3] for c in commands] == ["claude_code", "chatgpt", "cursor"]

    # when each runs as written, in SAM's folder
    for command in commands:
        answer = subprocess.run(["bash", "-c", command], cwd=ROOT, env=shell_environment(home),
                                capture_output=True, text=True, timeout=180)
        # then it works
        assert answer.returncode == 0, (command, answer.stdout, answer.stderr)
        assert re.search(r"[1-9]\d* memories created", answer.stdout), (command, answer.stdout)

    # and `me` is the admin's personal space, accepting what they imported
    me = Space.objects.get(slug="me")
    assert me.kind == "user"
    assert sorted(me.capture_sources) == ["chatgpt", "claude_code", "cursor"]
    assert SpaceMembership.objects.filter(space=me, user=admin, role="owner").exists()
    mine = client_with(f"Bearer {token}").get("/api/v1/me/memories/?page_size=100").json()["results"]
    assert {m["source"]["type"] for m in mine if m["space"] == "me"} == {"import"}
    assert "Decided to store money as NUMERIC(12,2) because floats broke the invoice totals." in {
        m["content"] for m in mine}


def test_the_first_import_says_it_created_me(transactional_db, tmp_path):
    get_user_model().objects.create_superuser("admin", email="", password="unused")
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I live in Graz."))

    first = manage("jsonl", str(history), "--space", "me")
    second = manage("jsonl", str(history), "--space", "me")

    assert first.returncode == 0, first.stderr
    assert "Created space 'me': admin's personal space, accepting jsonl imports." in first.stderr
    assert second.stderr == ""
    assert "(1 unchanged)" in second.stdout


def test_me_needs_a_person_when_the_install_has_no_single_superuser(transactional_db, tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I live in Graz."))

    answer = manage("jsonl", str(history), "--space", "me")

    assert answer.returncode == 2
    assert "--user NAME" in answer.stderr
    assert not Space.objects.filter(slug="me").exists()


def test_someone_elses_me_is_not_changed(transactional_db, tmp_path):
    owner = UserFactory(username="first-comer")
    SpaceFactory(slug="me", name="Mine", kind="user", members={owner: "owner"}, capture_sources=["chatgpt"])
    UserFactory(username="second", is_superuser=True)
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I live in Graz."))

    answer = manage("jsonl", str(history), "--space", "me", "--user", "second")

    assert answer.returncode == 3
    assert Space.objects.get(slug="me").capture_sources == ["chatgpt"]


# --- watch ---------------------------------------------------------------------------------------


def imports_audited() -> int:
    return AuditEvent.objects.filter(action="import").count()


def test_a_watcher_reads_only_the_sessions_that_changed(db, tmp_path):
    SpaceFactory(slug="webshop", name="Webshop", capture_sources=["claude_code"])
    projects = tmp_path / "projects" / "-home-dev-shop"
    projects.mkdir(parents=True)
    session = projects / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude_code_hook" / f"{SESSION}.jsonl", session)
    (projects / "other.jsonl").write_text((FIXTURES / "claude_code" / "-home-dev-webshop" /
                                           "5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10.jsonl").read_text())
    watcher = Watcher(actor=SYSTEM, space="webshop", source="claude_code", path=tmp_path / "projects")

    first = watcher.cycle(import_id="imp_1")
    audited = imports_audited()
    quiet = watcher.cycle(import_id="imp_2")
    audited_after_quiet = imports_audited()
    with session.open("a") as handle:
        handle.write((FIXTURES / "claude_code_hook" / "resumed.jsonl.part").read_text())
    grown = watcher.cycle(import_id="imp_3")

    assert (first.files_changed, first.report.conversations_seen) == (2, 2)
    assert quiet.line() == "cycle 2: nothing changed"
    assert audited_after_quiet == audited  # nothing was even read
    assert (grown.files_changed, grown.report.conversations_seen, grown.report.exchanges) == (1, 1, 1)
    assert grown.report.memories_created == 1
    assert grown.line() == ("cycle 3: 1 files changed, 1 conversations (0 unchanged), 1 new exchanges, "
                            "1 memories created, 0 reinforced, 0 unreadable items")
    assert ImportedMemory.objects.filter(import_id="imp_3").count() == 1


def test_watch_prints_a_line_per_cycle_and_stops_on_ctrl_c(webshop, tmp_path):
    history = tmp_path / "history"
    history.mkdir()
    (history / "a.jsonl").write_text(said("c1", "I speak German."))
    # As from a terminal, where Ctrl-C reaches it: a runner started in the background without
    # job control passes SIGINT on ignored, and Python then never installs its handler.
    watching = subprocess.Popen(
        [sys.executable, "manage.py", "sam_chat_import", "jsonl", str(history), "--space", "webshop",
         "--watch", "--interval", "0.5"], cwd=ROOT, env=shell_environment(), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        first = watching.stdout.readline()
        with (history / "a.jsonl").open("a") as handle:
            handle.write(said("c1", "I work at Initech."))
        lines = [watching.stdout.readline()]
        while lines[-1] and "memories created" not in lines[-1]:
            lines.append(watching.stdout.readline())
        watching.send_signal(signal.SIGINT)
        rest, errors = watching.communicate(timeout=60)
    finally:
        if watching.poll() is None:
            watching.kill()

    assert first.startswith("cycle 1: 1 files changed, 1 conversations (0 unchanged), 1 new exchanges, "
                            "1 memories created"), first
    assert lines[-1].startswith(f"cycle {len(lines) + 1}: 1 files changed, 1 conversations (0 unchanged), "
                                "1 new exchanges, 1 memories created"), lines
    assert all(line.endswith(": nothing changed\n") for line in lines[:-1])
    assert rest.strip().splitlines()[-1].startswith("stopped after ")
    assert "Traceback" not in errors
    assert watching.returncode == 0
    assert ImportedConversation.objects.get().exchanges == 2


def test_watch_stops_after_the_cycles_asked(webshop, tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I speak German."))
    started = time.monotonic()

    answer = manage("jsonl", str(history), "--space", "webshop", "--watch", "--interval", "0.2",
                    "--cycles", "3")

    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.splitlines()[1:] == ["cycle 2: nothing changed", "cycle 3: nothing changed"]
    assert time.monotonic() - started < 120


# --- when the memories are final -----------------------------------------------------------------


def embed_what_is_pending() -> None:
    """What the worker does after an import: embed the memories, then run their write checks."""
    tasks.memory_embed(memory_ids=list(Memory.objects.filter(embedding_status="pending")
                                       .values_list("pk", flat=True)))


@pytest.fixture
def capturing(space):
    space.capture_sources = ["jsonl"]
    space.save()
    return space


def test_the_command_says_what_is_still_pending_for_its_memories(capturing, tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I speak German. I live in Graz."))
    out = io.StringIO()

    call_command("sam_chat_import", "jsonl", str(history), "--space", "webshop", stdout=out)
    import_id = re.search(r"import (imp_\w+): not final yet", out.getvalue()).group(1)
    pending = selectors.import_progress(import_id=import_id)
    embed_what_is_pending()
    final = selectors.import_progress(import_id=import_id)

    assert "import imp_" in out.getvalue()
    assert ("not final yet: 2 of 2 memories wait for their embedding, 2 for their write checks"
            in out.getvalue())
    assert (pending.memories, pending.embedding_pending, pending.checks_pending) == (2, 2, 2)
    assert not pending.final
    assert (final.embedding_pending, final.checks_pending, final.final) == (0, 0, True)


def test_the_json_report_holds_the_same(capturing, tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I speak German."))
    out = io.StringIO()

    call_command("sam_chat_import", "jsonl", str(history), "--space", "webshop", "--json", stdout=out)

    progress = json.loads(out.getvalue())["progress"]
    assert progress == {"extraction_done": True, "memories": 1, "pending": {"embedding": 1, "checks": 1},
                        "embedding_failed": 0, "final": False}


def test_an_upload_s_report_says_when_extraction_embedding_and_checks_are_done(api, capturing):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from memories.capture import uploads

    answer = api.post("/api/v1/spaces/webshop/chat-imports/", {"source": "jsonl", "file": SimpleUploadedFile(
        "h.jsonl", (said("c1", "I speak German.") + said("c2", "I live in Graz.")).encode())},
        format="multipart").json()
    url = f"/api/v1/chat-imports/{answer['id']}/"
    queued = api.get(url).json()
    jobs.run(answer["id"], str(uploads.folder(answer["id"]) / "h.jsonl"))  # the job; its embeddings wait
    extracted = api.get(url).json()
    embed_what_is_pending()
    final = api.get(url).json()

    assert (answer["extraction_done"], answer["final"]) == (False, False)
    assert (queued["status"], queued["extraction_done"], queued["memories"], queued["final"]) == (
        "queued", False, 0, False)
    assert (extracted["status"], extracted["extraction_done"], extracted["memories"]) == ("done", True, 2)
    assert (extracted["pending"], extracted["final"]) == ({"embedding": 2, "checks": 2}, False)
    assert (final["pending"], final["embedding_failed"], final["final"]) == (
        {"embedding": 0, "checks": 0}, 0, True)
    assert ChatImport.objects.get().report["import_id"] == answer["id"]


def test_a_memory_that_failed_to_embed_does_not_keep_an_import_from_being_final(capturing, tmp_path):
    history = tmp_path / "h.jsonl"
    history.write_text(said("c1", "I speak German."))
    call_command("sam_chat_import", "jsonl", str(history), "--space", "webshop", stdout=io.StringIO())
    [link] = ImportedMemory.objects.all()
    Memory.objects.filter(pk=link.memory_id).update(embedding_status="failed")

    progress = selectors.import_progress(import_id=link.import_id)

    assert (progress.embedding_failed, progress.embedding_pending, progress.checks_pending) == (1, 0, 0)
    assert progress.final


def test_a_file_a_refusal_stopped_is_read_again_at_the_next_cycle(db, tmp_path):
    from core.errors import ModeRefusesWrites

    space = SpaceFactory(slug="webshop", name="Webshop", capture_sources=["claude_code"])
    projects = tmp_path / "projects"
    projects.mkdir()
    session = projects / f"{SESSION}.jsonl"
    shutil.copy(FIXTURES / "claude_code_hook" / f"{SESSION}.jsonl", session)
    watcher = Watcher(actor=SYSTEM, space="webshop", source="claude_code", path=projects)
    watcher.cycle(import_id="imp_1")
    with session.open("a") as handle:
        handle.write((FIXTURES / "claude_code_hook" / "resumed.jsonl.part").read_text())
    space.mode = "paused"
    space.save()

    with pytest.raises(ModeRefusesWrites):
        watcher.cycle(import_id="imp_2")
    space.mode = "assist"
    space.save()
    resumed = watcher.cycle(import_id="imp_3")

    assert (resumed.files_changed, resumed.report.memories_created) == (1, 1)
