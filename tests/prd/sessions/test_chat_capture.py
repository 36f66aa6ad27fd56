"""A session's chat turns go through the chat extractors: what the person said in a coding
session becomes memories of its space, read incrementally, as the space's mode allows."""

from __future__ import annotations

from typing import Any

import pytest

from memories.models import ImportedConversation, Memory
from prd.sessions import chat_capture
from prd.sessions.models import SessionEvent

SESSIONS = "/api/v1/sessions/"


def start(api) -> str:
    answer = api.post(SESSIONS, {"space": "webshop", "title": "Refunds"}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()["session"]["id"]


def log(api, session_id: str, *events: dict[str, Any], status: int = 201):
    answer = api.post(f"{SESSIONS}{session_id}/events/", {"events": list(events)}, format="json")
    assert answer.status_code == status, answer.content
    return answer


def turn(event_id: str, text: str, **fields: Any) -> dict[str, Any]:
    return {"event_id": event_id, "event_type": "chat_turn", "text": text, **fields}


def captured() -> list[Memory]:
    return [m for m in Memory.objects.all() if (m.metadata.get("capture") or {}).get("source") == "session"]


def test_chat_turns_become_memories_of_the_session_with_their_evidence(api, space, on_commit):
    session_id = start(api)
    with on_commit():
        log(api, session_id,
            turn("t1", "We decided to use Stripe refunds because they settle in a day.", role="user"),
            turn("t2", "I live in Lisbon, by the way.", role="assistant"),  # the agent's words: not a fact
            {"event_id": "c1", "event_type": "command_run", "data": {"command": "pytest", "exit_code": 0}},
            turn("t3", "Keep answers short please."))  # no role, source chat: the person

    memories = {m.kind: m for m in captured()}
    assert set(memories) == {"decision", "style"}
    decision = memories["decision"]
    assert decision.space.slug == "webshop"
    assert "Stripe refunds" in decision.metadata["capture"]["evidence"]
    assert decision.source_ref == f"session:#{session_id}:0"
    assert "session" in decision.tags


def test_only_new_turns_are_read_as_the_session_goes_on(api, space, on_commit):
    session_id = start(api)
    with on_commit():
        log(api, session_id, turn("t1", "I speak Portuguese and English.", role="user"),
            turn("t2", "Noted.", role="assistant"))
    with on_commit():
        log(api, session_id, turn("t3", "Never push to main directly.", role="user"))
    with on_commit():
        log(api, session_id, {"event_id": "f1", "event_type": "file_change", "data": {"path": "a.py"}})

    assert sorted(m.kind for m in captured()) == ["fact", "standard"]
    mark = ImportedConversation.objects.get(source="session")
    assert mark.exchanges == 2
    # The job again, as a duplicate delivery would run it: nothing new.
    assert chat_capture.session_chat_capture(session_id=session_id).memories_created == 0
    assert len(captured()) == 2


def test_the_agents_turns_by_source_and_system_turns_are_not_the_persons(api, space, on_commit):
    session_id = start(api)
    with on_commit():
        log(api, session_id, turn("t1", "Can you check the refunds test?", role="user"),
            turn("t2", "I prefer tabs for Python.", source="agent"),
            turn("t3", "I work at Globex.", role="system"))

    assert captured() == []
    turns = SessionEvent.objects.filter(event_type="chat_turn").order_by("sequence")
    assert [chat_capture.role_of(t) for t in turns] == ["user", "assistant", None]


def test_an_incognito_space_keeps_neither_the_turns_nor_memories(api, space, on_commit):
    session_id = start(api)
    space.mode = "incognito"
    space.save()

    with on_commit():
        log(api, session_id, turn("t1", "I live in Lisbon.", role="user"))

    assert captured() == []
    assert not ImportedConversation.objects.exists()


@pytest.mark.parametrize("mode", ["paused", "off"])
def test_a_capture_queued_before_a_pause_keeps_nothing_until_resumed(api, space, on_commit, mode):
    session_id = start(api)
    log(api, session_id, turn("t1", "I live in Lisbon.", role="user"))  # on_commit not run: the job waits
    space.mode = mode
    space.save()

    chat_capture.session_chat_capture(session_id=session_id)
    assert captured() == []
    space.mode = "assist"
    space.save()
    chat_capture.session_chat_capture(session_id=session_id)
    assert [m.content for m in captured()] == ["The user lives in Lisbon."]
