"""Chat-history imports: the readers on hand-built fixtures of each format, the extractors,
and the import through the command (opt-in, provenance, redaction, re-imports that add
nothing, modes). The fixtures hold no real personal data."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from governance.audit.models import AuditEvent
from memories.capture import chatgpt, claude_code, cursor, exchanges, extract, jsonl
from memories.capture.conversation import Conversation, ItemError, Message
from memories.models import ImportedConversation, Memory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "chat"
CLAUDE = FIXTURES / "claude_code"


def conversations(items):
    return [i for i in items if isinstance(i, Conversation)]


def errors(items):
    return [i for i in items if isinstance(i, ItemError)]


# --- readers ----------------------------------------------------------------------------


def test_claude_code_keeps_what_the_person_typed_and_the_replies_joined():
    items = list(claude_code.read(CLAUDE))

    [session] = conversations(items)
    assert session.key == "5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10"
    assert session.title == "Fix psycopg ImportError in CI"  # its own summary, not another session's
    roles = [m.role for m in session.messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant", "user"]
    assert [c.name for c in session.messages[1].tool_calls] == ["Edit"]  # the reply's own tool call
    assert session.messages[2].tool_results[0].text == "File edited"
    assert [m.id for m in session.messages[:4]] == ["u2", "a2", "u3", "u4"]
    reply = session.messages[1].text
    assert reply.startswith("The slim image has no libpq")
    assert '```bash\npip install "psycopg[binary]==3.2.3"\n```' in reply  # one reply over three lines
    typed = " ".join(m.text for m in session.messages if m.role == "user")
    for left_out in ("Caveat:", "/clear", "File edited", "Search the repo", "continued from a previous"):
        assert left_out not in typed
    [cut] = errors(items)
    assert cut.item == "line 17"
    assert "not JSON" in cut.reason


def test_every_source_has_a_reader():
    from memories.capture import SOURCES, ingest

    assert tuple(ingest.READERS) == SOURCES


def test_claude_code_leaves_subagent_files_out():
    assert [p.name for p in claude_code.files(CLAUDE)] == ["5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10.jsonl"]


def test_chatgpt_reads_the_current_branch_only_with_custom_instructions_as_the_profile():
    items = list(chatgpt.read(FIXTURES / "chatgpt_conversations.json"))

    first, second = conversations(items)
    said = [m.text for m in first.messages]
    assert "I prefer spaces for Python code." in said
    assert "I prefer tabs for indentation." not in said  # an abandoned branch
    assert "Here is my desk setup. What monitor arm would you suggest?" in said  # image part left out
    assert not any("Thought for" in t or "image analysed" in t for t in said)
    assert first.profile == "I am a data engineer. I work at Initech.\nKeep answers short and concrete."
    assert [m.role for m in second.messages] == ["user", "assistant", "user", "assistant"]
    assert second.messages[1].text.startswith("from fastapi import FastAPI")  # a `code` message
    [broken] = errors(items)
    assert broken.item == "conversation 3"


def test_chatgpt_reads_a_split_export_and_keeps_what_precedes_a_cut():
    split = conversations(chatgpt.read(FIXTURES / "chatgpt_split"))
    truncated = list(chatgpt.read(FIXTURES / "chatgpt_truncated.json"))

    assert [c.title for c in split] == ["Moving and editor setup", "API framework", "Lunch spots"]
    assert chatgpt.count(FIXTURES / "chatgpt_split") == 3
    assert [c.title for c in conversations(truncated)] == ["API framework"]
    assert "not valid JSON" in errors(truncated)[0].reason


def make_cursor_store(path: Path, *, version: int = 10) -> Path:
    """A Cursor global store with a composer in the newer layout (headers + bubble rows), one in
    the older inline layout, one of a schema version SAM does not know, and one broken."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    db.execute("CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    rows = {
        "composerData:c-new": {"_v": version, "composerId": "c-new", "name": "Flaky test",
                               "createdAt": 1767500000000,
                               "fullConversationHeadersOnly": [{"bubbleId": "b1", "type": 1},
                                                               {"bubbleId": "b2", "type": 2}]},
        "bubbleId:c-new:b1": {"_v": 3, "type": 1, "bubbleId": "b1",
                              "text": "I always use pytest-randomly to catch order-dependent tests."},
        "bubbleId:c-new:b2": {"_v": 3, "type": 2, "bubbleId": "b2",
                              "text": "Good habit; seed it in CI logs."},
        "composerData:c-old": {"_v": 2, "composerId": "c-old", "conversation": [
            {"type": 1, "bubbleId": "o1", "text": "My name is Lee Park."},
            {"type": 2, "bubbleId": "o2", "text": "Hello Lee."}]},
        "composerData:c-future": {"_v": 99, "composerId": "c-future", "conversation": []},
    }
    for key, value in rows.items():
        db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", [key, json.dumps(value).encode()])
    db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", ["composerData:c-broken", b"{not json"])
    db.execute("INSERT INTO ItemTable VALUES (?, ?)", [cursor.CHAT_PANEL_KEY, json.dumps({"tabs": [
        {"tabId": "t1", "chatTitle": "Old chat", "bubbles": [
            {"type": "user", "text": "I speak Korean and English."},
            {"type": "ai", "rawText": "Noted."}]}]})])
    db.commit()
    db.close()
    return path


def test_cursor_reads_both_composer_layouts_and_the_old_chat_panel(tmp_path):
    items = list(cursor.read(make_cursor_store(tmp_path / "state.vscdb")))

    found = {c.key: c for c in conversations(items)}
    assert set(found) == {"c-new", "c-old", "t1"}
    assert [(m.role, m.text) for m in found["c-new"].messages] == [
        ("user", "I always use pytest-randomly to catch order-dependent tests."),
        ("assistant", "Good habit; seed it in CI logs.")]
    assert found["c-new"].messages[0].at is not None  # the composer's createdAt, in milliseconds
    assert found["t1"].messages[1].text == "Noted."
    reasons = {e.item: e.reason for e in errors(items)}
    assert "schema version 99 is not supported" in reasons["composerData:c-future"]
    assert "unreadable conversation" in reasons["composerData:c-broken"]


def test_cursor_says_plainly_what_is_not_a_cursor_store(tmp_path):
    corrupt = tmp_path / "corrupt.vscdb"
    corrupt.write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    other = tmp_path / "other.vscdb"
    sqlite3.connect(other).execute("CREATE TABLE notes (x)").connection.commit()

    [damaged] = list(cursor.read(corrupt))
    [foreign] = list(cursor.read(other))

    assert "SQLite" in damaged.reason or "damaged" in damaged.reason
    assert "not a Cursor store" in foreign.reason


def test_generic_jsonl_groups_by_conversation_and_reports_bad_lines():
    items = list(jsonl.read(FIXTURES / "generic.jsonl"))

    found = {c.key: c for c in conversations(items)}
    assert [m.role for m in found["g1"].messages] == ["user", "assistant"]
    assert found["g1"].title == "Intro"
    assert found["g2"].messages[0].at is not None  # Unix seconds
    bad = [(e.item, e.reason) for e in errors(items)]
    assert bad[0] == ("line 5", "missing content")
    assert bad[1][0] == "line 6"
    assert bad[1][1].startswith("not JSON")


# --- exchanges and extraction ------------------------------------------------------------


def conversation(*turns: tuple[str, str]) -> Conversation:
    return Conversation(source="jsonl", key="t", origin="t.jsonl",
                        messages=[Message(role, text) for role, text in turns])  # type: ignore[arg-type]


def test_exchanges_keep_code_whole_and_pick_out_entities():
    [one] = exchanges.split(conversation(
        ("user", "Running `pytest` gives ModuleNotFoundError: No module named 'app' in tests/test_api.py"),
        ("assistant", "Install it in editable mode:\n```bash\n$ pip install -e .\n```\n"
                      "```python\nfrom app.main import create_app\n```"),
    ))

    assert [(b.language, b.code) for b in one.code_blocks] == [
        ("bash", "$ pip install -e ."), ("python", "from app.main import create_app")]
    assert one.entities["files"] == ["tests/test_api.py"]
    assert one.entities["commands"] == ["pip install -e ."]
    assert one.entities["errors"] == ["ModuleNotFoundError: No module named 'app' in tests/test_api.py"]
    assert one.entities["libraries"] == ["app"]


@pytest.mark.parametrize(("said", "expected"), [
    ("My name is Priya Raman.", "The user's name is Priya Raman."),
    ("I'm a senior backend developer at a bank.", "The user is a senior backend developer."),
    ("I work at Globex now.", "The user works at Globex."),
    ("I live in Lisbon, Portugal.", "The user lives in Lisbon."),
    ("i'm a nurse, night shifts mostly", "The user is a nurse."),
    ("been at Norrvik Bank for three years now", "The user works at Norrvik Bank."),
    ("I moved to Berlin last month.", "The user moved to Berlin and lives there now."),
    ("I speak Portuguese and English.", "The user speaks Portuguese and English."),
    ("I prefer spaces for Python code.", "The user prefers spaces for Python code."),
    ("Please keep answers short and concrete.", "The user wants answers short and concrete."),
    ("We decided to pin psycopg because the slim image stays.",
     "Decided to pin psycopg because the slim image stays."),
    ("Never commit the .env file to the repository.", "Never commit the .env file to the repository."),
    ("Hello, I am Dr. Amara Okafor.", "The user's name is Amara Okafor."),
    ("electrician here.", "The user is an electrician."),
    ("I work at a small bakery chain called Fournil Doré.", "The user works at Fournil Doré."),
    ("I work at Birchwell & Marsh.", "The user works at Birchwell & Marsh."),
    ("also i only speak english and russian", "The user speaks English and Russian."),
    ("I'm a native Spanish speaker.", "The user speaks Spanish."),
    ("I'm big on tofu though.", "The user likes tofu."),
    ("I never fly if I can avoid it.", "The user never flies if they can avoid it."),
    ("keep it short pls", "The user wants answers short."),
    ("you can skip the emoji with me", "The user wants no emoji in answers."),
    ("We picked pnpm as our package manager.", "Decided on pnpm as our package manager."),
    ("In our codebase, all public functions must have docstrings.",
     "all public functions must have docstrings."),
    ("Our rule is everyone runs make lint before pushing.", "everyone runs make lint before pushing."),
    ("A word of warning: the legacy API returns dates as DD/MM/YYYY.",
     "Watch out: the legacy API returns dates as DD/MM/YYYY."),
    ("I bake sourdough every weekend.", "The user bakes sourdough every weekend."),
    ("name's Tomasz.", "The user's name is Tomasz."),
    ("Anselm here.", "The user's name is Anselm."),
    ("my day job is as a radiologist", "The user is a radiologist."),
    ("we're settled in Graz", "The user lives in Graz."),
    ("since moving to Lisbon my standups are at 9", "The user moved to Lisbon and lives there now."),
    ("German is my first language.", "The user speaks German."),
    ("I'm vegetarian.", "The user is vegetarian."),
    ("answer in simple English please", "The user wants answers in simple English."),
    ("we (platform team) settled on Argo CD rather than Flux.", "Decided on Argo CD rather than Flux."),
    ("plain pip install is not allowed.", "plain pip install is not allowed."),
    ("learned this the hard way today: std::process::exit doesn't run destructors.",
     "Watch out: std::process::exit doesn't run destructors."),
])
def test_the_user_rules_state_what_the_user_said(said, expected):
    [found] = extract.extract(exchanges.split(conversation(("user", said))))

    assert found.content == expected
    assert found.evidence == said


@pytest.mark.parametrize("said", [
    "Am I a good developer?",
    "If I lived in Paris I would walk to work.",
    "I used to work at Initech.",
    "Maybe I prefer tabs, not sure.",
    "The assistant said: my name is Bot.",
    "```\nmy name is Nobody\n```",
    "My boss said: I'm a terrible planner.",
    "The assistant before you said my name is Bob.",
    "I never got a reply from them.",
    "I'm into the third week of my diet.",
    "Every time I run it, it must restart.",
    "I get a warning: DeprecationWarning in the tests.",
    "If we switched to Go it would be faster.",
    "Is it true that all PRs must be reviewed?",
    "She's a nurse at St. Mary's.",
    "I cooked pasta every day last week.",
    "My sister is vegetarian.",
    "ok that makes sense. good to know",
])
def test_questions_hypotheticals_and_others_words_are_not_facts_about_the_user(said):
    assert extract.extract(exchanges.split(conversation(("user", said)))) == []


def test_someone_naming_themselves_says_what_they_do_and_where():
    said = "Hello, I am Dr. Amara Okafor-Lindqvist, a veterinarian at Greenpasture Animal Clinic."

    found = extract.extract(exchanges.split(conversation(("user", said))))

    assert [c.content for c in found] == ["The user's name is Amara Okafor-Lindqvist.",
                                          "The user is a veterinarian.",
                                          "The user works at Greenpasture Animal Clinic."]


@pytest.mark.parametrize(("asked", "reply", "expected"), [
    ("What languages are you comfortable listening in?", "English and Tagalog, both fluently.",
     ["The user speaks English and Tagalog."]),
    ("Happy to help. Where are you based?", "Near Porto, in a small town.", ["The user lives in Porto."]),
    # The language of a letter is not one the user speaks; an answer that is more than the
    # value is not read as one.
    ("What language should the letter be in?", "French.", []),
    ("Where are you travelling from?", "Paris.", []),
    ("Which languages do you speak?", "English please, and keep it simple", []),
])
def test_an_answer_to_the_assistants_question_is_a_fact(asked, reply, expected):
    turns = (("user", "hi"), ("assistant", asked), ("user", reply))
    found = extract.extract(exchanges.split(conversation(*turns)))

    assert [c.content for c in found if c.rule != "style"] == expected


def test_wishes_said_in_one_sentence_are_one_memory():
    said = "no explanations please, just the code"

    [found] = extract.extract(exchanges.split(conversation(("user", said))))

    assert found.rule == "style"
    assert "no explanations" in found.content
    assert "code" in found.content


def test_a_statement_the_user_calls_a_lesson_is_a_gotcha():
    said = "ohh so a typed nil pointer inside an error interface is not == nil. nasty, good to know"
    small_talk = "ok that makes sense. good to know"

    [found] = extract.extract(exchanges.split(conversation(("user", said))))

    assert found.content == "Watch out: a typed nil pointer inside an error interface is not == nil."
    assert extract.extract(exchanges.split(conversation(("user", small_talk)))) == []


def test_a_personal_habit_is_not_a_team_standard():
    said = "I always travel with just a carry-on, never check bags."

    found = extract.extract(exchanges.split(conversation(("user", said))))

    assert [(c.rule, c.content) for c in found] == [
        ("preference", "The user always travels with just a carry-on.")]


def test_a_follow_up_question_keeps_the_fix_that_worked():
    problem = ("user", "Docker build fails with npm ERR! code EACCES")
    fix = ("assistant", "Fix the ownership:\n```dockerfile\nRUN chown -R node:node /app\n```")
    follow_up = ("user", "where does that go exactly, before npm ci?")
    answer = ("assistant", "Right after WORKDIR /app.")

    [solution] = extract.extract(exchanges.split(conversation(problem, fix, follow_up, answer,
                                                              ("user", "works now, the build is green"))))

    assert "chown -R node:node /app" in solution.content
    assert solution.content.endswith("Confirmed: works now, the build is green")


def test_a_solution_needs_the_user_to_say_the_fix_worked():
    problem = ("user", "CI fails with ImportError: no pq wrapper available")
    fix = ("assistant", "Use the binary build:\n```bash\npip install psycopg[binary]\n```")

    unconfirmed = extract.extract(exchanges.split(conversation(problem, fix, ("user", "Hmm, still red."))))
    confirmed = extract.extract(exchanges.split(conversation(problem, fix, ("user", "That worked, thanks!"))))

    assert [c.kind for c in unconfirmed] == []
    [solution] = confirmed
    assert solution.kind == "solution"
    assert solution.content.startswith(
        "Problem: ImportError: no pq wrapper available\nFix: Use the binary build:")
    assert "```bash\npip install psycopg[binary]\n```" in solution.content


# --- the import ------------------------------------------------------------------------------


def contents() -> list[str]:
    return [m.content for m in Memory.objects.all()]  # sealed: compared in Python, not SQL


def memory(content: str) -> Memory:
    [found] = [m for m in Memory.objects.all() if m.content == content]
    return found


def said(conversation_id: str, text: str) -> str:
    return json.dumps({"conversation_id": conversation_id, "role": "user", "content": text}) + "\n"


def run(*args: str) -> dict:
    out = io.StringIO()
    call_command("sam_chat_import", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


@pytest.fixture
def capturing(space):
    space.capture_sources = ["claude_code", "chatgpt", "cursor", "jsonl"]
    space.save()
    return space


def test_a_space_imports_nothing_until_its_owner_allows_the_source(space):
    with pytest.raises(CommandError, match="does not accept imports from claude_code"):
        run("claude_code", str(CLAUDE), "--space", "webshop")

    assert Memory.objects.count() == 0


def test_an_import_writes_through_the_memory_services_and_says_what_it_did(capturing):
    report = run("claude_code", str(CLAUDE), "--space", "webshop")

    assert report["conversations_seen"] == 1
    assert report["exchanges"] == 3
    assert [e["origin"] for e in report["errors"]] == [  # relative to the history's root
        "-home-dev-webshop/5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10.jsonl"]
    memories = {m.kind: m for m in Memory.objects.all()}
    assert set(memories) == {"fact", "decision", "standard", "solution"}
    employer = memory("The user works at Globex.")
    assert employer.source_type == "import"
    assert employer.source_ref == "claude_code:5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10.jsonl" \
                                  "#5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10:0"
    assert employer.metadata["capture"]["evidence"] == "I work at Globex on the webshop team."
    assert employer.priority == "high"
    # A fact is kept only if redaction leaves its value: never a blanked "[name]".
    assert not any("[name]" in text for text in contents())
    assert "dana.k@example.com" not in json.dumps([m.metadata for m in Memory.objects.all()])
    solution = memories["solution"]
    assert solution.memory_type == "procedural"
    assert 'pip install "psycopg[binary]==3.2.3"' in solution.content
    assert report["memories_created"] == Memory.objects.count()
    assert AuditEvent.objects.filter(action="import", space_slug="webshop").exists()


def test_importing_again_adds_nothing_and_a_grown_conversation_only_its_new_exchanges(capturing, tmp_path):
    history = tmp_path / "history.jsonl"
    history.write_text(said("c1", "I speak German."))
    first = run("jsonl", str(history), "--space", "webshop")
    again = run("jsonl", str(history), "--space", "webshop")
    with history.open("a") as handle:
        handle.write(json.dumps({"conversation_id": "c1", "role": "assistant", "content": "Gut."}) + "\n")
        handle.write(said("c1", "I work at Initech."))
    grown = run("jsonl", str(history), "--space", "webshop")

    assert first["memories_created"] == 1
    assert (again["conversations_skipped"], again["memories_created"], again["exchanges"]) == (1, 0, 0)
    assert (grown["exchanges"], grown["memories_created"]) == (1, 1)
    assert sorted(contents()) == [
        "The user speaks German.", "The user works at Initech."]
    assert ImportedConversation.objects.get().exchanges == 2


def test_a_repeated_fact_reinforces_and_a_changed_one_supersedes(capturing, on_commit, tmp_path):
    history = tmp_path / "history.jsonl"
    history.write_text(said("a", "I live in Paris.") + said("b", "I live in Paris."))
    with on_commit():
        report = run("jsonl", str(history), "--space", "webshop")
    moved = tmp_path / "moved.jsonl"
    moved.write_text(said("c", "I moved to Berlin."))
    with on_commit():
        run("jsonl", str(moved), "--space", "webshop")

    assert (report["memories_created"], report["memories_reinforced"]) == (1, 1)
    paris = memory("The user lives in Paris.")
    berlin = memory("The user moved to Berlin and lives there now.")
    assert paris.archived
    assert paris.superseded_by_id == berlin.id


def test_a_dry_run_writes_nothing(capturing):
    report = run("chatgpt", str(FIXTURES / "chatgpt_conversations.json"), "--space", "webshop", "--dry-run")

    assert report["candidates"] > 0
    assert Memory.objects.count() == 0
    assert not ImportedConversation.objects.exists()


def test_a_paused_space_imports_nothing_and_says_so(capturing):
    capturing.mode = "paused"
    capturing.save()

    with pytest.raises(CommandError, match="paused"):
        run("chatgpt", str(FIXTURES / "chatgpt_conversations.json"), "--space", "webshop")
    assert Memory.objects.count() == 0


def test_a_fact_that_redaction_would_blank_is_left_out_and_said_why(capturing):
    report = run("chatgpt", str(FIXTURES / "chatgpt_conversations.json"), "--space", "webshop")

    [name] = [r for r in report["rejected"] if r["rule"] == "name"]
    assert "personal data" in name["errors"]["content"][0]
    assert not any("[name]" in text for text in contents())


def test_chatgpt_custom_instructions_and_messages_become_facts(capturing):
    run("chatgpt", str(FIXTURES / "chatgpt_conversations.json"), "--space", "webshop")

    found = set(contents())
    assert {"The user is a data engineer.", "The user works at Initech.",
            "The user wants answers short and concrete.",
            "The user lives in Lisbon.", "The user speaks Portuguese and English.",
            "The user prefers spaces for Python code.",
            "Decided to go with FastAPI because we need async handlers.",
            "Never commit the .env file to the repository."} <= found
    assert "The user prefers tabs for indentation." not in found


def test_cursor_imports_through_the_command(capturing, tmp_path):
    report = run("cursor", str(make_cursor_store(tmp_path / "state.vscdb")), "--space", "webshop")

    assert report["conversations_seen"] == 3
    assert len(report["errors"]) == 2
    assert {"The user prefers pytest-randomly to catch order-dependent tests.",
            "The user speaks Korean and English."} <= set(contents())


# --- the REST upload -----------------------------------------------------------------------


def upload(api, name: str, data: bytes, source: str = "jsonl", slug: str = "webshop"):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return api.post(f"/api/v1/spaces/{slug}/chat-imports/",
                    {"source": source, "file": SimpleUploadedFile(name, data)}, format="multipart")


def zipped(files: dict[str, bytes]) -> bytes:
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        for name, data in files.items():
            bundle.writestr(name, data)
    return buffer.getvalue()


def test_an_upload_is_imported_by_a_job_and_reports_back(api, capturing, on_commit):
    from memories.capture import uploads

    history = json.dumps({"conversation_id": "c1", "role": "user", "content": "I speak German."}).encode()
    with on_commit():
        answer = upload(api, "history.jsonl", history)

    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "queued"
    done = api.get(f"/api/v1/chat-imports/{answer.json()['id']}/").json()
    assert done["status"] == "done"
    assert done["report"]["memories_created"] == 1
    assert contents() == ["The user speaks German."]
    assert not uploads.folder(answer.json()["id"]).exists()  # the raw history is not kept


def test_a_zipped_claude_code_projects_folder_is_read_whole(api, capturing, on_commit):
    session = (CLAUDE / "-home-dev-webshop" / "5b0c3c1e-8f0e-4a51-9d1f-2f6c1f9e7a10.jsonl").read_bytes()
    with on_commit():
        answer = upload(api, "projects.zip", zipped({"projects/-home-dev-webshop/s1.jsonl": session}),
                        source="claude_code")

    report = api.get(f"/api/v1/chat-imports/{answer.json()['id']}/").json()["report"]
    assert report["conversations_seen"] == 1
    assert report["memories_created"] >= 3


@pytest.mark.parametrize(("source", "allowed", "mode", "code"), [
    ("jsonl", [], "assist", 403), ("jsonl", ["jsonl"], "paused", 409), ("slack", ["jsonl"], "assist", 400)])
def test_uploads_the_space_does_not_accept_are_refused(api, space, source, allowed, mode, code):
    space.capture_sources, space.mode = allowed, mode
    space.save()

    answer = upload(api, "history.jsonl", b"{}", source=source)

    assert answer.status_code == code, answer.content
    assert not Memory.objects.exists()


def test_an_empty_file_is_refused(api, capturing):
    answer = upload(api, "history.jsonl", b"")

    assert answer.status_code == 400
    assert "file" in answer.json()["error"]["fields"]


def test_an_archive_that_climbs_out_of_itself_is_refused(api, capturing):
    answer = upload(api, "evil.zip", zipped({"../../etc/evil.jsonl": b"{}"}))

    assert answer.status_code == 400
    assert "Refused member" in json.dumps(answer.json())


def test_someone_else_s_import_is_not_found(api, capturing, on_commit):
    from tests.personas import member_client

    with on_commit():
        answer = upload(api, "history.jsonl", b'{"conversation_id": "c", "role": "user", "content": "Hi."}')
    reader = member_client(capturing, "viewer", "import-reader")

    assert reader.get(f"/api/v1/chat-imports/{answer.json()['id']}/").status_code == 404


# --- the optional model extractor (a local fake of an OpenAI-compatible endpoint) ---------


def with_model(fake):
    from django.test import override_settings

    return override_settings(SAM_EXTRACTOR={"PROVIDER": "openai", "URL": fake.url, "MODEL": "extractor-1",
                                            "API_KEY": "", "TIMEOUT_SECONDS": 0.5, "MAX_ATTEMPTS": 3,
                                            "MIN_CONFIDENCE": 0.6})


HISTORY = said("m1", "honestly these days my go-to editor is helix, been on it since spring. "
                     "(mail me at dana.k@example.com)")


def model_answer(*memories: dict) -> str:
    return json.dumps({"memories": list(memories)})


HELIX = {"rule": "preference", "content": "The user's editor of choice is Helix.", "value": "Helix",
         "evidence": "my go-to editor is helix", "exchange": 0, "confidence": 0.9}


def test_the_model_adds_what_the_rules_miss_and_each_memory_quotes_the_user(capturing, tmp_path):
    from tests.prd.fake_chat import FakeChatServer

    history = tmp_path / "h.jsonl"
    history.write_text(HISTORY)
    invented = {**HELIX, "content": "The user is a Rust developer.", "rule": "role",
                "evidence": "I write Rust all day"}  # not the user's words
    unsure = {**HELIX, "content": "The user likes spring.", "evidence": "since spring", "confidence": 0.3}
    with FakeChatServer() as fake, with_model(fake):
        # In a code fence, with a trailing comma: repaired.
        fake.reply = "```json\n" + model_answer(HELIX, invented, unsure)[:-2] + "],}\n```"
        report = run("jsonl", str(history), "--space", "webshop")

    assert report["model_candidates"] == 1
    assert contents() == ["The user's editor of choice is Helix."]
    stored = Memory.objects.get()
    assert stored.metadata["capture"]["rule"] == "model:preference"
    assert stored.metadata["capture"]["evidence"] == "my go-to editor is helix"
    prompt = fake.requests[0]["messages"]
    assert "Never: anything the assistant says" in prompt[0]["content"]
    assert "[exchange 0] USER: honestly these days" in prompt[1]["content"]
    assert "dana.k@example.com" not in prompt[1]["content"]  # redacted before it leaves SAM


def test_a_broken_answer_is_retried_and_the_rules_stand_alone_when_the_model_keeps_failing(capturing,
                                                                                          tmp_path):
    from tests.prd.fake_chat import FakeChatServer

    history = tmp_path / "h.jsonl"
    history.write_text(HISTORY + said("m2", "I live in Ghent."))
    with FakeChatServer() as fake, with_model(fake):
        fake.replies = ["I think the user likes Helix.", model_answer(HELIX)]  # prose, then JSON
        fake.reply = model_answer()
        retried = run("jsonl", str(history), "--space", "webshop")
    with FakeChatServer() as fake, with_model(fake):
        fake.delay_seconds = 1.0  # past the 0.5 s timeout, every time
        history.write_text(said("m3", "I live in Oslo."))
        failed = run("jsonl", str(history), "--space", "webshop")

    assert retried["model_failures"] == []
    assert "The user's editor of choice is Helix." in contents()
    assert "The user lives in Ghent." in contents()  # the rules' memory, the model said nothing more
    assert [(f["conversation"], f["attempts"]) for f in failed["model_failures"]] == [("m3", 3)]
    assert "The user lives in Oslo." in contents()  # the rules still did their part


# --- your controls: what SAM knows about me ----------------------------------------------------


@pytest.fixture
def personal(user):
    from tests.factories import SpaceFactory

    return SpaceFactory(slug="me", name="Me", kind="user", members={user: "owner"}, capture_sources=["jsonl"])


def test_i_can_list_what_sam_knows_about_me_by_category_with_its_source(api, personal, space, tmp_path):
    from tests.personas import member_client

    history = tmp_path / "h.jsonl"
    history.write_text(said("c", "I live in Lisbon.")
                       + said("c", "We decided to use uv because pip was slow."))
    run("jsonl", str(history), "--space", "me")  # imported by SAM itself into my own space
    create_mine = api.post("/api/v1/memories/", {"space": "webshop", "title": "My note",
                                                  "content": "I keep release notes in the wiki."},
                           format="json")
    colleague = member_client(space, "contributor", "a-colleague")
    colleague.post("/api/v1/memories/", {"space": "webshop", "title": "Theirs",
                                         "content": "They keep notes in a notebook."}, format="json")

    everything = api.get("/api/v1/me/memories/").json()["results"]
    facts = api.get("/api/v1/me/memories/?category=fact").json()["results"]
    knowledge = api.get("/api/v1/me/memories/?category=knowledge").json()["results"]

    assert sorted(m["title"] for m in everything) == sorted(["My note", "Where the user lives",
                                                              "A decision: use uv"])
    assert {(m["content"], m["category"]) for m in facts} == {("The user lives in Lisbon.", "fact"),
                                                             ("I keep release notes in the wiki.", "fact")}
    assert [m["category"] for m in knowledge] == ["knowledge"]
    assert knowledge[0]["source"]["type"] == "import"
    assert create_mine.status_code == 201
    assert api.get("/api/v1/me/memories/?category=gossip").status_code == 400


def test_my_memories_filter_by_kind_group_and_still_take_its_former_name(api, personal):
    for kind, title in (("preference", "Tabs"), ("decision", "Chose uv"), ("fact", "Lives in Oslo")):
        api.post("/api/v1/memories/", {"space": "me", "kind": kind, "title": title,
                                       "content": f"{title}, as I said it."}, format="json")

    by_group = api.get("/api/v1/me/memories/?kind_group=knowledge").json()["results"]
    by_former_name = api.get("/api/v1/me/memories/?category=knowledge").json()["results"]
    both_agree = api.get("/api/v1/me/memories/?kind_group=fact&category=fact").json()["results"]
    new_name_wins = api.get("/api/v1/me/memories/?kind_group=fact&category=preference").json()["results"]

    assert [(m["title"], m["kind_group"], m["category"]) for m in by_group] == [
        ("Chose uv", "knowledge", "knowledge")]
    assert by_former_name == by_group
    assert [m["title"] for m in both_agree] == ["Lives in Oslo"]
    assert new_name_wins == both_agree
    assert api.get("/api/v1/me/memories/?kind_group=gossip").status_code == 400


def test_a_contributor_deletes_what_they_wrote_but_not_what_others_did(space):
    from tests.personas import member_client

    contributor = member_client(space, "contributor", "taking-it-back")
    mine = contributor.post("/api/v1/memories/", {"space": "webshop", "title": "Mine",
                                                   "content": "Something I said about myself."},
                            format="json").json()["memory"]["id"]
    theirs = make_memory_in(space, "Someone else's note about the build.")

    assert contributor.delete(f"/api/v1/memories/{mine}/").status_code == 204
    assert contributor.delete(f"/api/v1/memories/{theirs}/").status_code == 403
    assert not Memory.objects.filter(pk=mine).exists()


def make_memory_in(space, content: str) -> str:
    from tests.factories import make_memory

    return make_memory(space, title="A note", content=content).pk


def test_pausing_my_mode_pauses_capture(api, capturing, on_commit):
    assert api.put("/api/v1/me/mode/", {"mode": "paused"}, format="json").status_code == 200

    answer = upload(api, "history.jsonl", said("c1", "I speak German.").encode())

    assert answer.status_code == 409
    assert not Memory.objects.exists()


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=st.lists(st.fixed_dictionaries({
    "title": st.text(alphabet="abcdefghij klmnop", min_size=3,
                     max_size=40).filter(lambda t: len(" ".join(t.split())) >= 3),
    "content": st.text(alphabet="abcdefghij klmnopqrs.,", min_size=10,
                       max_size=200).filter(lambda t: len(" ".join(t.split())) >= 10),
    "tags": st.lists(st.sampled_from(["alpha", "beta", "gamma"]), max_size=3, unique=True),
    "kind": st.sampled_from(["fact", "preference", "decision", "style"]),
    "importance": st.sampled_from([0.1, 0.5, 0.9]),
}), min_size=1, max_size=4, unique_by=lambda e: " ".join(e["content"].split()).lower()))
def test_my_export_imports_back_without_loss(api, personal, entries):
    Memory.objects.all().delete()
    for item in entries:
        assert api.post("/api/v1/memories/", {"space": "me", **item}, format="json").status_code == 201
    before = {m["id"]: m for m in api.get("/api/v1/me/memories/?page_size=100").json()["results"]}
    bundle = b"".join(api.get("/api/v1/me/export/").streaming_content).decode()

    Memory.objects.all().delete()
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".jsonl") as handle:
        handle.write(bundle)
        handle.flush()
        call_command("sam_import", handle.name, "--json", stdout=io.StringIO())

    after = {m["id"]: m for m in api.get("/api/v1/me/memories/?page_size=100").json()["results"]}
    kept = ("title", "content", "summary", "canonical_phrases", "tags", "kind", "memory_type", "priority",
            "reliability", "importance", "source", "metadata", "training_examples", "context_window",
            "decay_policy", "occurred_at", "space", "category")
    assert set(after) == set(before)
    for memory_id, memory in before.items():
        assert {k: after[memory_id][k] for k in kept} == {k: memory[k] for k in kept}


def test_chatgpt_s_export_archive_is_read_as_downloaded(api, capturing, on_commit):
    export = (FIXTURES / "chatgpt_conversations.json").read_bytes()
    with on_commit():
        answer = upload(api, "chatgpt-export.zip", zipped({"export-2026-03-01/conversations.json": export,
                                                           "export-2026-03-01/chat.html": b"<html></html>"}),
                        source="chatgpt")

    report = api.get(f"/api/v1/chat-imports/{answer.json()['id']}/").json()["report"]
    assert report["conversations_seen"] == 2
    assert report["memories_created"] > 0


def test_a_cursor_store_is_uploaded_as_it_is(api, capturing, on_commit, tmp_path):
    store = make_cursor_store(tmp_path / "state.vscdb").read_bytes()
    with on_commit():
        answer = upload(api, "state.vscdb", store, source="cursor")

    report = api.get(f"/api/v1/chat-imports/{answer.json()['id']}/").json()["report"]
    assert report["conversations_seen"] == 3
    assert [e["item"] for e in report["errors"]] == ["composerData:c-broken", "composerData:c-future"]


def test_what_one_conversation_taught_is_linked_for_recall_to_follow(capturing, tmp_path):
    from memories.models import MemoryRelation

    history = tmp_path / "history.jsonl"
    history.write_text(said("c1", "I speak German. I work at Initech.") + said("c2", "I live in Graz."))

    run("jsonl", str(history), "--space", "webshop")

    german = memory("The user speaks German.")
    initech = memory("The user works at Initech.")
    graz = memory("The user lives in Graz.")
    [edge] = MemoryRelation.objects.all()
    assert (edge.source_id, edge.target_id, edge.relation_type) == (german.pk, initech.pk, "RELATES_TO")
    assert edge.provenance == {"by": "chat_import", "source": "jsonl"}
    assert not MemoryRelation.objects.filter(source=graz).exists()
