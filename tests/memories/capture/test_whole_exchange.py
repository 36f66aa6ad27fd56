"""The whole exchange: tool calls and results read from Claude Code and Cursor, solutions that
tool traffic proves (a failing run, the edits, a passing run), and decisions the user
accepted from the assistant. The recorded Claude Code session is a hand-written fixture in the
format Claude Code writes; it holds no real personal data."""

from __future__ import annotations

import hashlib
import io
import json
import sqlite3
from pathlib import Path

from django.core.management import call_command

from governance.access import SYSTEM
from memories.capture import claude_code, cursor, exchanges, extract, ingest
from memories.capture.conversation import Conversation, Message, ToolCall, ToolResult
from memories.models import Memory

RECORDED = Path(__file__).resolve().parent / "fixtures" / "claude_code_tools"
SESSION = "9d2e4b7a-3c1f-4e8a-b6d5-0a7f2c9e1b34"


def session(*messages: Message, source: str = "claude_code") -> Conversation:
    return Conversation(source=source, key="s", origin="s.jsonl", messages=list(messages))


def user(text: str, turn: str = "") -> Message:
    return Message("user", text, id=turn)


def assistant(text: str = "", *calls: ToolCall, turn: str = "") -> Message:
    return Message("assistant", text, tool_calls=list(calls), id=turn)


def result(call_id: str, text: str, *, error: bool = False, turn: str = "") -> Message:
    return Message("tool", text, tool_results=[ToolResult(call_id, text, is_error=error)], id=turn)


def bash(call_id: str, command: str) -> ToolCall:
    return ToolCall(call_id, "Bash", {"command": command})


def edit(call_id: str, file: str, old: str, new: str) -> ToolCall:
    return ToolCall(call_id, "Edit", {"file_path": file, "old_string": old, "new_string": new})


def found(conversation: Conversation, rule: str) -> list[extract.Candidate]:
    return [c for c in extract.extract(exchanges.split(conversation)) if c.rule == rule]


FAILING = ("E   ModuleNotFoundError: No module named 'orjson'\n"
           "FAILED tests/test_api.py::test_export - ModuleNotFoundError\n1 failed, 20 passed in 1.20s")


# --- readers ----------------------------------------------------------------------------


def test_claude_code_reads_tool_calls_results_and_turn_ids():
    [recorded] = [c for c in claude_code.read(RECORDED) if isinstance(c, Conversation)]

    assert recorded.key == SESSION
    assert recorded.title == "Refund tests fail on decimal comma"
    assert [m.role for m in recorded.messages] == ["user", *["assistant", "tool"] * 4, "assistant", "user"]
    first_reply = recorded.messages[1]
    assert first_reply.text == "Let me run them."  # the thinking block is left out
    assert first_reply.tool_calls == [ToolCall("toolu_01Run", "Bash", {
        "command": "pytest tests/test_refunds.py -q", "description": "Run the refund tests"})]
    [failing] = recorded.messages[2].tool_results
    assert failing.is_error
    assert failing.call_id == "toolu_01Run"
    assert "decimal.InvalidOperation" in failing.text
    assert recorded.messages[4].tool_results[0].text.startswith("The file /home/dev/shop/shop/refunds.py")
    assert [m.id for m in recorded.messages if m.role == "user"] == ["e-01", "e-15"]  # the meta line is out


def test_a_long_tool_result_keeps_its_head_and_its_tail(tmp_path):
    output = "Traceback (most recent call last):\n" + "noise\n" * 5000 + "1 failed in 9.1s"
    entries = [
        {"type": "user", "uuid": "u1", "sessionId": "long", "message": {"role": "user", "content": "run it"}},
        {"type": "assistant", "uuid": "a1", "sessionId": "long", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make test"}}]}},
        {"type": "user", "uuid": "r1", "sessionId": "long", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
             "content": [{"type": "text", "text": output}]}]}},
    ]
    file = tmp_path / "long.jsonl"
    file.write_text("".join(json.dumps(e) + "\n" for e in entries))

    [read] = list(claude_code.read(file))

    [kept] = read.messages[2].tool_results
    assert len(kept.text) < 4100
    assert kept.text.startswith("Traceback (most recent call last):")
    assert kept.text.endswith("1 failed in 9.1s")
    assert "characters left out" in kept.text


OLD_IMPORT, NEW_IMPORT = "import format from 'date-fns/format'", "import { format } from 'date-fns'"


def make_agent_store(path: Path) -> Path:
    """A Cursor store whose agent ran a command that failed, edited a file, and ran it again."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)")
    bubbles = [
        {"bubbleId": "b1", "type": 1, "text": "npm test fails after the date-fns bump"},
        {"bubbleId": "b2", "type": 2, "text": "Running the tests.", "toolFormerData": {
            "tool": 15, "name": "run_terminal_cmd", "toolCallId": "call-1", "status": "completed",
            "rawArgs": json.dumps({"command": "npm test", "is_background": False}),
            "result": json.dumps({"output": "FAIL src/format.test.ts\n  TypeError: format is not a function\n"
                                            "Tests: 1 failed, 9 passed", "exitCodeV2": 1})}},
        {"bubbleId": "b3", "type": 2, "text": "", "toolFormerData": {
            "tool": 38, "name": "search_replace", "toolCallId": "call-2", "status": "completed",
            "params": json.dumps({"file_path": "src/format.ts", "old_string": OLD_IMPORT,
                                  "new_string": NEW_IMPORT}),
            "result": json.dumps({"diff": f"-{OLD_IMPORT}\n+{NEW_IMPORT}"})}},
        {"bubbleId": "b4", "type": 2, "text": "", "toolFormerData": {
            "tool": 15, "name": "run_terminal_cmd", "toolCallId": "call-3", "status": "completed",
            "rawArgs": json.dumps({"command": "npm test"}),
            "result": json.dumps({"output": "PASS src/format.test.ts\nTests: 10 passed, 10 total",
                                  "exitCodeV2": 0})}},
        {"bubbleId": "b5", "type": 2, "text": "date-fns 3 has no default exports: format is a named import."},
    ]
    headers = [{"bubbleId": b["bubbleId"], "type": b["type"]} for b in bubbles]
    rows = {"composerData:agent-1": {"_v": 10, "composerId": "agent-1", "name": "date-fns bump",
                                     "fullConversationHeadersOnly": headers}}
    rows |= {f"bubbleId:agent-1:{b['bubbleId']}": {"_v": 3, **b} for b in bubbles}
    for key, value in rows.items():
        db.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", [key, json.dumps(value).encode()])
    db.commit()
    db.close()
    return path


def test_cursor_reads_both_sides_with_the_agents_tool_calls_and_results(tmp_path):
    [agent] = list(cursor.read(make_agent_store(tmp_path / "state.vscdb")))

    assert [(m.role, m.id) for m in agent.messages] == [
        ("user", "b1"), ("assistant", "b2"), ("tool", "b2"), ("assistant", "b3"), ("tool", "b3"),
        ("assistant", "b4"), ("tool", "b4"), ("assistant", "b5")]
    assert agent.messages[1].tool_calls == [ToolCall("call-1", "run_terminal_cmd",
                                                     {"command": "npm test", "is_background": False})]
    failing, passing = agent.messages[2].tool_results[0], agent.messages[6].tool_results[0]
    assert failing.is_error  # its exit code
    assert "TypeError: format is not a function" in failing.text
    assert not passing.is_error
    [fix] = found(agent, "tool_solution")
    assert "import { format } from 'date-fns'" in fix.content
    assert fix.evidence == "Tests: 10 passed, 10 total"
    assert fix.turn == "b4"


# --- exchanges ---------------------------------------------------------------------------


def test_a_tool_result_never_starts_an_exchange_and_the_steps_keep_their_order():
    [one, two] = exchanges.split(session(
        user("tests fail", "u1"),
        assistant("Running them.", bash("t1", "pytest -q"), turn="a1"),
        result("t1", FAILING, error=True, turn="r1"),
        assistant("", edit("t2", "app/api.py", "import orjson", "import json"), turn="a2"),
        result("t2", "The file app/api.py has been updated.", turn="r2"),
        user("thanks", "u2"),
    ))

    assert one.user == "tests fail"
    assert one.assistant == "Running them."  # the text rules read the text alone
    assert [s.kind for s in one.steps] == ["text", "call", "result", "call", "result"]
    assert one.turns == ["u1", "a1", "r1", "a2", "r2"]
    assert one.entities["files"] == ["app/api.py"]
    assert one.entities["commands"] == ["pytest -q"]
    assert one.entities["errors"] == ["E   ModuleNotFoundError: No module named 'orjson'"]
    assert two.turns == ["u2"]


# --- solutions proven by tools -----------------------------------------------------------


def test_a_recorded_session_gives_one_solution_with_the_error_the_files_and_the_proof():
    [recorded] = [c for c in claude_code.read(RECORDED) if isinstance(c, Conversation)]

    [fix] = found(recorded, "tool_solution")

    assert fix.kind == "solution"
    assert "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]" in fix.content
    assert "Changed /home/dev/shop/shop/refunds.py: `return Refund(amount=Decimal(amount))` -> " \
           "`return Refund(amount=Decimal(amount.replace(',', '.')))`" in fix.content
    assert "/home/dev/shop/tests/test_refunds.py" in fix.content
    assert "Fix: Fixed: shop/refunds.py now normalises the decimal comma before parsing" in fix.content
    assert "Want me to" not in fix.content  # the closing offer is no part of the fix
    assert fix.content.endswith("Proof: `uv run pytest tests/test_refunds.py -q`: 14 passed in 0.41s")
    assert fix.evidence == "14 passed in 0.41s"  # quoted exactly from the passing run
    assert fix.turn == "e-12"  # the tool result's entry


def test_a_failure_never_followed_by_a_passing_run_is_no_solution():
    unfixed = session(
        user("make the build green"),
        assistant("", bash("t1", "cargo build")),
        result("t1", "error[E0308]: mismatched types\n --> src/main.rs:4:18", error=True),
        assistant("", edit("t2", "src/main.rs", "let n: u32 = s;", "let n: u32 = s.parse()?;")),
        result("t2", "The file src/main.rs has been updated."),
        assistant("", bash("t3", "cargo build")),
        result("t3", "error[E0277]: the `?` operator can only be used in a function that returns `Result`",
               error=True),
        assistant("That needs a signature change; I'll stop here."),
    )
    passed_without_an_edit = session(
        user("flaky?"),
        assistant("", bash("t1", "pytest -q")), result("t1", FAILING, error=True),
        assistant("", bash("t2", "pytest -q")), result("t2", "21 passed in 1.1s"),
    )

    assert found(unfixed, "tool_solution") == []
    assert found(passed_without_an_edit, "tool_solution") == []


def test_the_user_saying_it_still_fails_cancels_the_solution():
    turns = [
        user("fix the export test"),
        assistant("", bash("t1", "pytest tests/test_api.py")), result("t1", FAILING, error=True),
        assistant("", edit("t2", "requirements.txt", "", "orjson==3.10.7")), result("t2", "updated"),
        assistant("", bash("t3", "pip install -r requirements.txt && pytest tests/test_api.py")),
        result("t3", "21 passed in 1.3s"),
        assistant("Added orjson to requirements.txt; the export test passes."),
    ]

    assert len(found(session(*turns), "tool_solution")) == 1
    assert found(session(*turns, user("still failing on CI with the same error")), "tool_solution") == []


def test_a_grown_session_yields_a_solution_once():
    turns = [
        user("fix it"), assistant("", bash("t1", "go test ./...")),
        result("t1", "--- FAIL: TestSum (0.00s)\n    sum_test.go:9: got 3, want 4\nFAIL", error=True),
        assistant("", edit("t2", "sum.go", "return a + b - 1", "return a + b")), result("t2", "ok"),
        assistant("", bash("t3", "go test ./...")), result("t3", "ok  \texample.com/sum\t0.01s"),
    ]
    split = exchanges.split(session(*turns, user("thanks, now the docs"), assistant("Sure.")))

    assert [c.rule for c in extract.extract(split) if c.rule == "tool_solution"] == ["tool_solution"]
    assert [c for c in extract.extract(split, start=1) if c.rule == "tool_solution"] == []


# --- decisions the user accepted ---------------------------------------------------------


PLAN = ("## Move the job queue to Redis streams\n\n1. Add a consumer group per job type.\n"
        "2. Replace the cron poller with XREADGROUP.\n3. Drop the jobs table after a week.")


def plan_session(*after: Message) -> Conversation:
    return session(
        user("the jobs table is a bottleneck, plan a fix, don't change anything yet", "u1"),
        assistant("Here's the plan.", ToolCall("p1", "ExitPlanMode", {"plan": PLAN}), turn="a1"),
        *after)


def test_an_accepted_exitplanmode_plan_is_a_decision():
    said_so = plan_session(result("p1", "Plan shown to the user. Waiting for approval.", turn="r1"),
                           user("sounds good, ship it", "u2"))
    approved = plan_session(result("p1", "User has approved your plan. You can now start coding.", turn="r1"))

    [by_words] = found(said_so, "accepted_plan")
    [by_dialog] = found(approved, "accepted_plan")

    assert by_words.kind == "decision"
    assert by_words.content == "Decided: Move the job queue to Redis streams"
    assert (by_words.evidence, by_words.turn, by_words.exchange) == ("sounds good, ship it", "u2", 1)
    assert by_dialog.content == by_words.content
    assert (by_dialog.evidence, by_dialog.turn) == ("User has approved your plan", "r1")


def test_a_suggestion_the_user_turned_down_ignored_or_replaced_is_no_decision():
    refusal = "The user doesn't want to proceed with this tool use. The tool use was rejected."
    rejected = plan_session(result("p1", refusal, error=True), user("no, keep the table and add an index"))
    ignored = plan_session(result("p1", "Plan shown to the user."),
                           user("what does XREADGROUP cost in memory?"))
    replaced = session(
        user("which http client for the app?"),
        assistant("I'd recommend Retrofit with OkHttp; Ktor if you go multiplatform."),
        user("no, we'll use Ktor, we ship iOS next year"))
    offered = session(user("tests pass now"),
                      assistant("Done. Want the same for the handler tests?"), user("yes pls"))

    for conversation in (rejected, ignored, replaced, offered):
        assert found(conversation, "accepted_plan") == []


def test_the_option_the_user_picked_is_the_decision():
    options = ("A few ways to go:\n\n1. Plain `useEffect` + `fetch`\n2. TanStack Query: caching and retries "
               "out of the box\n3. RTK Query, if you already have Redux\n\nI'd lean towards option 2.")
    picked = session(user("data fetching for the grid?"), assistant(options), user("ok let's do option 2."))
    chat = session(user("how do I speed up the import?"),
                   assistant("Two ways: (1) batch the inserts with COPY, or (2) drop the indexes during the "
                             "load. I'd suggest the first."),
                   user("ok I went with your first option, works. 40s instead of 6 min"), source="chatgpt")

    [decision] = found(picked, "accepted_plan")
    [acted] = found(chat, "accepted_plan")

    assert decision.content == "Decided: TanStack Query: caching and retries out of the box"
    assert decision.evidence == "ok let's do option 2."
    assert acted.content == "Decided: batch the inserts with COPY"
    assert acted.evidence == "ok I went with your first option, works"


def test_the_users_own_words_outrank_the_assistants():
    conversation = session(
        user("pnpm or npm for the monorepo?"),
        assistant("I'd recommend pnpm: workspaces are first-class and installs are fast."),
        user("We decided to use pnpm because the workspaces are first-class."))

    decisions = [c for c in extract.extract(exchanges.split(conversation)) if c.kind == "decision"]

    assert [c.rule for c in decisions] == ["decision"]  # the user's rule, not the assistant's plan


# --- watermarks ------------------------------------------------------------------------------


def earlier_fingerprint(conversation: Conversation) -> str:
    """The fingerprint as imports computed it before tool traffic was read."""
    digest = hashlib.sha256()
    digest.update(conversation.profile.encode())
    for message in conversation.messages:
        digest.update(json.dumps([message.role, message.text]).encode())
    return digest.hexdigest()


def test_old_watermarks_stay_valid_without_tool_traffic():
    plain = session(user("I live in Lisbon."), assistant("Noted."))
    with_tools = session(user("run it"), assistant("Running.", bash("t1", "make")), result("t1", "ok"),
                         assistant("", bash("t2", "make test")), result("t2", "ok"), assistant("Done."))
    as_read_before = session(user("run it"), assistant("Running."), assistant("Done."))

    assert plain.fingerprint() == earlier_fingerprint(plain)
    assert with_tools.fingerprint() != as_read_before.fingerprint()  # the tool traffic is hashed after
    assert with_tools.fingerprint() == session(*with_tools.messages).fingerprint()


# --- through the import ------------------------------------------------------------------------


def test_an_imported_solution_keeps_its_quote_and_turn(space):
    space.capture_sources = ["claude_code"]
    space.save()
    out = io.StringIO()

    call_command("sam_chat_import", "claude_code", str(RECORDED), "--space", "webshop", "--json", stdout=out)

    [solution] = [m for m in Memory.objects.all() if m.metadata["capture"]["rule"] == "tool_solution"]
    assert solution.memory_type == "procedural"
    assert solution.metadata["capture"]["evidence"] == "14 passed in 0.41s"
    assert solution.metadata["capture"]["turn"] == "e-12"
    assert json.loads(out.getvalue())["errors"] == []


# --- the model extractor sees the tool traffic (a local fake of an OpenAI-compatible endpoint) ---


def with_model(fake):
    from django.test import override_settings

    return override_settings(SAM_EXTRACTOR={"PROVIDER": "openai", "URL": fake.url, "MODEL": "extractor-1",
                                            "API_KEY": "", "TIMEOUT_SECONDS": 0.5, "MAX_ATTEMPTS": 3,
                                            "MIN_CONFIDENCE": 0.6})


ERROR_QUOTE = "decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]"
MODEL_FIX = {"rule": "solution", "content": "Refund amounts with a decimal comma failed to parse; "
                                            "normalising the comma before Decimal() fixed it.",
             "value": "replace(',', '.')", "evidence": ERROR_QUOTE, "exchange": 0, "confidence": 0.9}


def import_recorded() -> dict:
    out = io.StringIO()
    call_command("sam_chat_import", "claude_code", str(RECORDED), "--space", "webshop", "--json", stdout=out)
    return json.loads(out.getvalue())


def recorded_split() -> list[exchanges.Exchange]:
    [recorded] = [c for c in claude_code.read(RECORDED) if isinstance(c, Conversation)]
    return exchanges.split(recorded)


def test_the_model_sees_tool_errors_and_may_quote_a_tool_result():
    from memories.capture import model_extractor
    from tests.prd.fake_chat import FakeChatServer

    made_up = {**MODEL_FIX, "evidence": "ValueError: amount must be positive"}  # in no result
    with FakeChatServer() as fake, with_model(fake):
        fake.reply = json.dumps({"memories": [MODEL_FIX, made_up]})
        outcome = model_extractor.extract_with_model(recorded_split())

    prompt = fake.requests[0]["messages"]
    assert "A solution is a problem that was fixed" in prompt[0]["content"]
    told = prompt[1]["content"]
    assert "[exchange 0] TOOL ERROR (`pytest tests/test_refunds.py -q`): E   " + ERROR_QUOTE in told
    assert "[exchange 0] TOOL PASSED (`uv run pytest tests/test_refunds.py -q`): 14 passed in 0.41s" in told
    assert "[exchange 0] EDITED: /home/dev/shop/shop/refunds.py, /home/dev/shop/tests/test_refunds.py" in told
    [solution] = outcome.candidates
    assert (solution.rule, solution.evidence, solution.turn) == ("model:solution", ERROR_QUOTE, "e-05")


def test_a_model_solution_the_tools_already_proved_is_merged_away_and_prose_is_retried(space):
    from tests.prd.fake_chat import FakeChatServer

    space.capture_sources = ["claude_code"]
    space.save()
    with FakeChatServer() as fake, with_model(fake):
        fake.replies = ["The user fixed a decimal bug.", json.dumps({"memories": [MODEL_FIX]})]  # prose first
        report = import_recorded()

    assert len(fake.requests) == 2
    assert report["model_failures"] == []
    assert report["model_candidates"] == 1
    rules = [m.metadata["capture"]["rule"] for m in Memory.objects.all()]
    assert rules.count("tool_solution") == 1
    assert "model:solution" not in rules  # the same fix, found by the tools first


def test_when_the_model_times_out_the_tool_solution_stands_alone(space):
    from tests.prd.fake_chat import FakeChatServer

    space.capture_sources = ["claude_code"]
    space.save()
    with FakeChatServer() as fake, with_model(fake):
        fake.delay_seconds = 1.0  # past the 0.5 s timeout, every time
        report = import_recorded()

    assert [(f["conversation"], f["attempts"]) for f in report["model_failures"]] == [(SESSION, 3)]
    assert [m.metadata["capture"]["rule"] for m in Memory.objects.all()].count("tool_solution") == 1


def test_a_local_model_server_is_one_setting(monkeypatch):
    import pytest
    from django.core.exceptions import ImproperlyConfigured

    from samsite.settings.env import extractor_preset

    monkeypatch.setenv("SAM_EXTRACTOR", "ollama:llama3.1:8b")
    ollama = extractor_preset("SAM_EXTRACTOR")
    monkeypatch.setenv("SAM_EXTRACTOR", "vllm:Qwen/Qwen2.5-7B-Instruct")
    vllm = extractor_preset("SAM_EXTRACTOR")
    monkeypatch.setenv("SAM_EXTRACTOR", "llama3.1")  # no server named

    assert ollama == {"PROVIDER": "openai", "URL": "http://localhost:11434/v1", "MODEL": "llama3.1:8b"}
    assert vllm["URL"] == "http://localhost:8000/v1"
    with pytest.raises(ImproperlyConfigured):
        extractor_preset("SAM_EXTRACTOR")


def test_a_run_sent_to_the_background_proves_nothing():
    backgrounded = session(
        user("fix the failing test"),
        assistant("", bash("t1", "pytest -q")), result("t1", FAILING, error=True),
        assistant("", edit("t2", "shop/refunds.py", "Decimal(amount)", "Decimal(amount.replace(',', '.'))")),
        result("t2", "The file shop/refunds.py has been updated."),
        assistant("", bash("t3", "pytest -q")),
        result("t3", "Command running in background with ID: bash_1"),
    )

    assert found(backgrounded, "tool_solution") == []


def test_an_accepted_plan_naming_someone_is_kept_with_the_name_redacted(space):
    space.capture_sources = ["claude_code"]
    space.save()
    conversation = session(
        user("who should own the billing migration? plan it", "u1"),
        assistant("Here's the plan.", ToolCall("p1", "ExitPlanMode", {
            "plan": "Assign the billing migration to Priya Raman and freeze the schema until it ships."}),
            turn="a1"),
        user("go ahead", "u2"))
    report = ingest.ChatImportReport(source="claude_code", space="webshop")

    ingest.capture(actor=SYSTEM, space=space, conversation=conversation, report=report)

    [plan] = [m for m in Memory.objects.all() if m.metadata["capture"]["rule"] == "accepted_plan"]
    assert "[name]" in plan.content
    assert "Priya" not in plan.content
    assert report.rejected == []
