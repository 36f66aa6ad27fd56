"""bench/capture_formats.py writes labelled rows as the files Claude Code, ChatGPT and Cursor
write, and SAM's readers read them back as they were."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memories.capture import claude_code, exchanges, extract
from memories.capture.conversation import Conversation

_SPEC = importlib.util.spec_from_file_location(
    "capture_formats", Path(__file__).resolve().parents[3] / "bench" / "capture_formats.py")
assert _SPEC is not None
assert _SPEC.loader is not None
formats = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(formats)

RUN = {"command": "pytest tests/test_refunds.py -q"}
ERROR = "E   decimal.InvalidOperation: [<class 'decimal.ConversionSyntax'>]\n1 failed, 12 passed"
FIX = {"file_path": "shop/refunds.py", "old_string": "Decimal(amount)",
       "new_string": "Decimal(amount.replace(',', '.'))"}
ROW = {"id": "t-017", "source": "claude_code", "series": "shop-api", "started_at": "2026-03-02T10:00:00Z",
       "messages": [
           {"role": "user", "text": "pytest is failing on the refund tests, can you look?"},
           {"role": "assistant", "text": "Let me run them.",
            "tool_calls": [{"id": "t1", "name": "Bash", "input": RUN}]},
           {"role": "tool", "tool_use_id": "t1", "is_error": True, "text": ERROR},
           {"role": "assistant", "text": "The amount arrives as a string with a comma.",
            "tool_calls": [{"id": "t2", "name": "Edit", "input": FIX}]},
           {"role": "tool", "tool_use_id": "t2", "is_error": False, "text": "The file was updated."},
           {"role": "assistant", "text": "", "tool_calls": [{"id": "t3", "name": "Bash", "input": RUN}]},
           {"role": "tool", "tool_use_id": "t3", "is_error": False, "text": "13 passed in 0.41s"},
           {"role": "assistant", "text": "Fixed: refunds.py normalises the decimal comma before parsing."},
       ]}


def test_a_labelled_row_becomes_a_claude_code_session_and_reads_back_whole(tmp_path):
    file = formats.to_claude_code(ROW, tmp_path)
    [read] = [c for c in claude_code.read(file) if isinstance(c, Conversation)]

    assert [m.role for m in read.messages] == [m["role"] for m in ROW["messages"]]
    assert [m.id for m in read.messages] == [formats.turn_id(ROW, i) for i in range(len(ROW["messages"]))]
    assert read.messages[2].tool_results[0].is_error
    [fix] = [c for c in extract.extract(exchanges.split(read)) if c.rule == "tool_solution"]
    assert "replace(',', '.')" in fix.content
    assert fix.turn == formats.turn_id(ROW, 6)  # the labelled message that holds the passing run


def test_chatgpt_and_cursor_rows_read_back_as_they_were():
    chat = {**ROW, "id": "c-1", "source": "chatgpt", "messages": [
        {"role": "user", "text": "which queue for the jobs?"},
        {"role": "assistant", "text": "I'd recommend Redis streams with a consumer group per job type."},
        {"role": "user", "text": "sounds good, let's do it"}]}
    agent = {**ROW, "id": "k-1", "source": "cursor"}

    from_chatgpt = formats.read_back(chat)
    from_cursor = formats.read_back(agent)

    assert [(m.role, m.text) for m in from_chatgpt.messages] == [(m["role"], m["text"])
                                                                 for m in chat["messages"]]
    assert [m.id for m in from_chatgpt.messages] == [formats.turn_id(chat, i) for i in range(3)]
    assert [c.id for m in from_cursor.messages for c in m.tool_calls] == ["t1", "t2", "t3"]
    assert [r.is_error for m in from_cursor.messages for r in m.tool_results] == [True, False, False]
    assert [c.rule for c in extract.extract(exchanges.split(from_cursor)) if c.rule == "tool_solution"] == [
        "tool_solution"]
