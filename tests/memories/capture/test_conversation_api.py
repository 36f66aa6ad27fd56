"""POST /api/v1/conversations/: a client posts a finished conversation and gets back what SAM
remembered from it, with the evidence of each memory; GET answers the settled outcome."""

from __future__ import annotations

import pytest
from django.test import override_settings

from governance.audit.models import AuditEvent
from memories.capture import conversation, conversations, uploads
from memories.models import ChatImport, ImportedConversation, Memory
from tests.personas import member_client

URL = "/api/v1/conversations/"


def said(role: str, content: str, message_id: str = "") -> dict:
    message = {"role": role, "content": content}
    if message_id:
        message["id"] = message_id
    return message


CHAT = [
    said("user", "Hi! I live in Lisbon and I work at Globex on the payments team.", "m1"),
    said("assistant", "Nice to meet you. How can I help today?", "m2"),
    said("user", "Keep answers short please. Can you review this function?", "m3"),
    said("assistant", "Sure, paste it.", "m4"),
]


def post(api, messages, *, space="webshop", conversation_id="c1", **fields):
    body = {"space": space, "messages": messages, **fields}
    if conversation_id:
        body["conversation_id"] = conversation_id
    return api.post(URL, body, format="json")


def contents() -> list[str]:
    return sorted(m.content for m in Memory.objects.all())  # sealed: compared in Python


def by_kind(items: list[dict]) -> dict[str, dict]:
    return {item["kind"]: item for item in items}


# --- what comes out -----------------------------------------------------------------------


def test_a_conversation_gives_memories_each_with_its_evidence(api, space):
    answer = post(api, CHAT, title="First chat")

    assert answer.status_code == 200, answer.content
    body = answer.json()
    assert body["kept"] is True
    assert (body["messages"], body["messages_read"], body["skipped"]) == (4, 4, False)
    created = by_kind(body["created"])
    assert set(created) == {"fact", "style"}
    assert {i["rule"] for i in body["created"]} >= {"location", "employer", "style"}
    [lives] = [i for i in body["created"] if i["rule"] == "location"]
    memory = Memory.objects.get(pk=lives["memory_id"])
    assert memory.content == "The user lives in Lisbon."
    assert lives["title"] == memory.title
    assert lives["evidence"]["message_index"] == 0
    assert lives["evidence"]["message_id"] == "m1"
    assert "I live in Lisbon" in lives["evidence"]["quote"]
    short = created["style"]
    assert (short["evidence"]["message_index"], short["evidence"]["message_id"]) == (2, "m3")
    assert body["reinforced"] == body["superseded"] == body["review"] == body["rejected"] == []
    assert memory.source_ref.startswith("api:")
    assert memory.metadata["capture"]["source"] == "api"
    assert AuditEvent.objects.filter(action="import", space_slug="webshop").exists()


def test_the_outcome_is_final_once_embedded_and_checked(api, space, on_commit):
    with on_commit():
        answer = post(api, CHAT).json()
    # Before the commit the embedding job had not run: the answer said so.
    assert answer["pending"] is True
    assert answer["pending_counts"]["embedding"] == len(answer["created"])

    settled = api.get(f"{URL}{answer['id']}/").json()

    assert settled["pending"] is False
    assert settled["pending_counts"] == {"embedding": 0, "checks": 0}
    assert settled["message"] == "Captured; this answer is final."
    assert [i["memory_id"] for i in settled["created"]] == [i["memory_id"] for i in answer["created"]]


def test_posting_it_again_adds_nothing_and_a_grown_one_only_its_new_messages(api, space):
    first = post(api, CHAT).json()
    again = post(api, CHAT).json()
    grown = post(api, [*CHAT, said("user", "Also, I speak Portuguese and English.", "m5"),
                       said("assistant", "Noted.", "m6")]).json()

    assert again["skipped"] is True
    assert (again["messages_read"], again["created"], again["reinforced"]) == (0, [], [])
    assert grown["messages_read"] == 2
    [languages] = grown["created"]
    assert languages["rule"] == "languages"
    assert (languages["evidence"]["message_index"], languages["evidence"]["message_id"]) == (4, "m5")
    assert Memory.objects.count() == len(first["created"]) + 1
    mark = ImportedConversation.objects.get(source="api")
    assert mark.exchanges == 3


def test_without_an_id_the_same_conversation_is_still_found_unchanged(api, space):
    post(api, CHAT, conversation_id="")
    again = post(api, CHAT, conversation_id="").json()

    assert again["skipped"] is True
    assert again["conversation_id"] is None


def test_a_repeated_fact_reinforces_and_a_changed_one_supersedes(api, space, on_commit):
    with on_commit():
        post(api, [said("user", "I live in Paris.")], conversation_id="a")
    with on_commit():
        repeated = post(api, [said("user", "I live in Paris.")], conversation_id="b").json()
    with on_commit():
        moved = post(api, [said("user", "I moved to Berlin.")], conversation_id="c").json()
    settled = api.get(f"{URL}{moved['id']}/").json()

    [paris] = repeated["reinforced"]
    assert Memory.objects.get(pk=paris["memory_id"]).content == "The user lives in Paris."
    [berlin] = settled["superseded"]
    assert berlin["supersedes"] == paris["memory_id"]
    assert settled["created"] == []
    assert settled["pending"] is False
    assert Memory.objects.get(pk=paris["memory_id"]).archived


def test_a_fact_redaction_would_blank_is_rejected_and_said_why(api, space):
    body = post(api, [said("user", "My name is Dana Kowalski.")]).json()

    [name] = body["rejected"]
    assert name["rule"] == "name"
    assert name["memory_id"] is None
    assert "personal data" in name["errors"]["content"][0]
    assert "Kowalski" not in (name["evidence"]["quote"] or "")  # not echoed back unredacted
    assert not Memory.objects.exists()
    # Once answered, a rejected candidate's words are not kept anywhere.
    later = api.get(f"{URL}{body['id']}/").json()
    assert later["rejected"][0]["evidence"]["quote"] is None
    assert later["rejected"][0]["evidence"]["message_index"] == 0


def test_tool_messages_and_calls_are_taken_in(api, space):
    messages = [
        said("user", "I prefer spaces for Python."),
        {"role": "assistant", "content": "", "tool_calls": [{"id": "t1", "name": "Read",
                                                             "input": {"path": "setup.cfg"}}]},
        {"role": "tool", "content": "", "tool_results": [{"call_id": "t1", "content": "[flake8]",
                                                          "is_error": False}]},
        said("assistant", "Your config already says so."),
    ]

    answer = post(api, messages)

    assert answer.status_code == 200, answer.content
    assert [i["rule"] for i in answer.json()["created"]] == ["preference"]


# --- long conversations: a job ---------------------------------------------------------------


def long_chat(turns: int) -> list[dict]:
    messages = [said("user", "I live in Porto.", "u0"), said("assistant", "Noted.", "a0")]
    for turn in range(1, turns):
        messages += [said("user", f"Next question number {turn}, what does this do?", f"u{turn}"),
                     said("assistant", f"It prints {turn}.", f"a{turn}")]
    return messages


def test_a_long_conversation_is_captured_by_a_job_and_reported_the_same_way(api, space, on_commit):
    with on_commit():
        answer = post(api, long_chat(30))

    assert answer.status_code == 202, answer.content
    queued = answer.json()
    assert (queued["status"], queued["pending"], queued["created"]) == ("queued", True, [])
    done = api.get(f"{URL}{queued['id']}/").json()
    assert done["status"] == "done"
    assert done["pending"] is False
    [porto] = done["created"]
    assert porto["evidence"] == {"quote": "I live in Porto.", "message_index": 0, "message_id": "u0"}
    assert contents() == ["The user lives in Porto."]
    assert not uploads.folder(queued["id"]).exists()  # the raw text is deleted when the job ends


# --- bad input ---------------------------------------------------------------------------


def test_malformed_messages_are_named_one_by_one(api, space):
    answer = post(api, [said("user", "fine"), {"role": "system", "content": "x"}, {"content": "no role"},
                        {"role": "user", "content": "x", "time": "yesterday"}])

    assert answer.status_code == 400
    fields = answer.json()["error"]["fields"]
    assert set(fields) == {"messages[1].role", "messages[2].role", "messages[3].time"}


@pytest.mark.parametrize("messages", [[], None, "hello"])
def test_a_conversation_without_messages_is_refused(api, space, messages):
    answer = api.post(URL, {"space": "webshop", "messages": messages}, format="json")

    assert answer.status_code == 400
    assert "messages" in answer.json()["error"]["fields"]


@override_settings(SAM_CONVERSATION_MAX_MESSAGE_CHARS=100)
def test_an_oversized_message_is_too_large(api, space):
    answer = post(api, [said("user", "short"), said("assistant", "x" * 101)])

    assert answer.status_code == 413
    assert answer.json()["error"]["code"] == "too_large"
    assert set(answer.json()["error"]["fields"]) == {"messages[1].content"}
    assert not Memory.objects.exists()


@override_settings(SAM_CONVERSATION_MAX_MESSAGES=10)
def test_too_many_messages_are_too_large_and_say_how_to_send_them(api, space):
    answer = post(api, long_chat(6))

    assert answer.status_code == 413
    assert "same conversation_id" in answer.json()["error"]["message"]
    assert not ChatImport.objects.exists()


# --- who may, and the memory modes ----------------------------------------------------------


@pytest.mark.parametrize("mode", ["paused", "off"])
def test_a_paused_or_off_space_keeps_nothing(api, space, mode):
    space.mode = mode
    space.save()

    answer = post(api, CHAT)

    assert answer.status_code == 409
    assert answer.json()["error"]["code"] == "mode_refuses_writes"
    assert not Memory.objects.exists()
    assert not ChatImport.objects.exists()
    assert not ImportedConversation.objects.exists()


def test_incognito_answers_what_would_be_kept_and_keeps_nothing(api, space):
    space.mode = "incognito"
    space.save()

    body = post(api, CHAT).json()

    assert body["kept"] is False
    assert body["id"] is None
    assert body["would_keep"] == 3
    assert "nothing was kept" in body["message"]
    assert body["created"] == []
    assert not Memory.objects.exists()
    assert not ChatImport.objects.exists()
    assert not ImportedConversation.objects.exists()


def test_another_users_space_is_not_found_and_a_reader_may_not_write(api, space):
    stranger = member_client(space, None, "stranger")
    reader = member_client(space, "viewer", "reader")

    assert post(stranger, CHAT).status_code == 404
    assert post(api, CHAT, space="nowhere").status_code == 404
    assert post(reader, CHAT).status_code == 403
    assert not Memory.objects.exists()


def test_someone_elses_conversation_is_not_found(api, space):
    body = post(api, CHAT).json()
    reader = member_client(space, "viewer", "reader")

    assert reader.get(f"{URL}{body['id']}/").status_code == 404
    assert api.get(f"{URL}imp_nothing/").status_code == 404


def test_the_space_need_not_allow_a_source_for_a_deliberate_post(api, space):
    assert space.capture_sources == []

    assert post(api, CHAT).status_code == 200


# --- retries ------------------------------------------------------------------------------


def test_a_retry_with_the_same_idempotency_key_replays_the_first_answer(api, space):
    first = api.post(URL, {"space": "webshop", "messages": CHAT}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    retry = api.post(URL, {"space": "webshop", "messages": CHAT}, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    other = api.post(URL, {"space": "webshop", "messages": CHAT[:2]}, format="json",
                     HTTP_IDEMPOTENCY_KEY="k-1")

    assert first.status_code == retry.status_code == 200
    assert retry["Idempotent-Replayed"] == "true"
    assert retry.json()["id"] == first.json()["id"]
    assert retry.json()["created"] == first.json()["created"]
    assert other.status_code == 409
    assert ChatImport.objects.count() == 1


def test_the_example_of_the_docs_works_on_a_fresh_instance(db):
    """docs/capture.md's curl example: the demo token is the admin's, and the demo space is webshop."""
    from tests.factories import SpaceFactory, UserFactory
    from tests.personas import client_for

    admin = UserFactory(username="admin", is_superuser=True, is_staff=True)
    SpaceFactory(slug="webshop", name="Webshop")
    example = {"space": "webshop", "conversation_id": "chat-42", "messages": [
        {"role": "user", "id": "m1", "content": "Hi, I live in Lisbon. Keep answers short please."},
        {"role": "assistant", "id": "m2", "content": "Noted. What can I do for you?"}]}

    answer = client_for(admin).post(URL, example, format="json")

    assert answer.status_code == 200, answer.content
    assert sorted(i["rule"] for i in answer.json()["created"]) == ["location", "style"]


def test_two_users_who_name_their_conversations_alike_each_keep_their_own(api, space):
    teammate = member_client(space, "contributor", "teammate")
    theirs = [said("user", "I work at Initech and I live in Porto.", "t1"),
              said("assistant", "Noted.", "t2")]

    first = post(api, CHAT, conversation_id="chat-1").json()
    second = post(teammate, theirs, conversation_id="chat-1").json()

    assert first["created"]
    assert second["created"]
    assert second.get("skipped") is not True
    assert {"The user works at Initech.", "The user lives in Porto."} <= set(contents())
    assert ImportedConversation.objects.filter(source="api").count() == 2


def test_a_tool_result_is_kept_to_its_head_and_tail():
    huge = "collected 1 item\n" + "x" * 200_000 + "\nFAILED tests/test_x.py::test_y - AssertionError"

    [result] = conversations.to_message({"role": "tool", "content": "", "tool_results": [
        {"call_id": "t1", "content": huge, "is_error": True}]}).tool_results

    assert len(result.text) <= 2 * conversation.RESULT_CHARS
    assert result.text.startswith("collected 1 item")
    assert result.text.endswith("FAILED tests/test_x.py::test_y - AssertionError")
