"""A bulk write does its checks once per request, not once per row, and changes nothing else:
the same rows, reports, reinforcements, tags, redactions and audit events as row by row."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from governance.audit.models import AuditEvent
from governance.audit.verify import audit_chain_verify
from memories.models import Memory, MemoryStats
from tests.factories import make_memory

TURNS = ["Amara: I've lived in Lyon six years now.", "Yara: lol", "Amara: Like a log for once.",
         "Yara: The billing export broke again after the deploy.", "Amara: Talk soon!"]


def rows(count: int, *, start: int = 0) -> list[dict]:
    """Varied rows as an import sends them: turns with metadata, some repeating a text."""
    return [{
        "space": "webshop", "title": f"Turn {start + n}: {TURNS[n % len(TURNS)][:30]}",
        "content": TURNS[n % len(TURNS)] if n % 10 == 9 else f"{TURNS[n % len(TURNS)]} (turn {start + n})",
        "metadata": {"speaker": TURNS[n % len(TURNS)].split(":")[0], "turn": f"t{start + n}"},
        "source": {"type": "import", "ref": "chat/d00"},
    } for n in range(count)]


def post(api, items: list[dict]):
    return api.post("/api/v1/memories/bulk/", {"items": items}, format="json",
                    HTTP_IDEMPOTENCY_KEY=str(uuid.uuid4()))


def test_the_queries_of_a_bulk_write_do_not_grow_with_its_rows(api, space):
    # Given a space that holds tagged memories (so tags are suggested) and a first write
    # behind it (data key, rights)
    make_memory(space, tags=["billing", "deploy"])
    assert post(api, rows(5, start=1000)).status_code == 201
    bad = {"space": "webshop", "title": "x", "content": "too short"}

    # When 20 rows and then 200 rows (each with repeated texts, bad rows and unknown spaces)
    # are written
    with CaptureQueriesContext(connection) as small:
        twenty = post(api, [*rows(20), bad, {**rows(1)[0], "space": "nowhere"}])
    with CaptureQueriesContext(connection) as large:
        hundreds = post(api, [*rows(200, start=100), *[bad] * 5, *[{**rows(1)[0], "space": "nowhere"}] * 5])

    # Then both succeed row by row, and the larger costs at most a few more statements
    assert twenty.status_code == hundreds.status_code == 200
    assert twenty.json()["reinforced"] >= 1
    assert hundreds.json()["failed"] == 10
    assert len(large.captured_queries) <= len(small.captured_queries) + 2, [
        q["sql"][:120] for q in large.captured_queries]


def test_bad_rows_are_reported_by_index_and_the_valid_ones_kept(api, space):
    # Given a batch with a bad shape, a short title, an unknown space and a taken id among valid rows
    taken = make_memory(space).id
    items = rows(8)
    items[1] = {**items[1], "memory_type": "dream"}
    items[3] = {**items[3], "title": "x"}
    items[5] = {**items[5], "space": "nowhere"}
    items[6] = {**items[6], "id": taken}

    # When it is written
    body = post(api, items).json()

    # Then each bad row says why, and every other row is stored
    failed = {r["index"]: r["errors"] for r in body["results"] if not r["ok"]}
    assert set(failed) == {1, 3, 5, 6}
    assert "memory_type" in failed[1]
    assert failed[3] == {"title": ["Must be at least 3 characters."]}
    assert failed[5] == {"space": ["No space 'nowhere'."]}
    assert failed[6] == {"id": [f"A memory '{taken}' already exists."]}
    kept = [r["id"] for r in body["results"] if r["ok"]]
    assert len(kept) == 4
    assert Memory.objects.filter(id__in=kept).count() == 4


def test_repeated_texts_reinforce_once_per_row_with_one_audit_event_each(api, space):
    # Given a memory stored with a text
    text = "Yara: the billing export broke again."
    stored = post(api, [{"space": "webshop", "title": "Billing export", "content": text}]).json()
    memory_id = stored["results"][0]["id"]
    before = MemoryStats.objects.get(memory_id=memory_id)
    events_before = AuditEvent.objects.filter(target_id=memory_id).count()

    # When one batch repeats it three times beside a new row
    items = [{"space": "webshop", "title": f"Repeat {n}", "content": text} for n in range(3)]
    new = {"space": "webshop", "title": "Something new", "content": "Amara: a new thing."}
    body = post(api, [*items, new]).json()

    # Then each repeat reinforced the stored memory once, and each left its own audit event
    assert [r.get("reinforced") for r in body["results"]] == [True, True, True, False]
    assert {r["id"] for r in body["results"][:3]} == {memory_id}
    after = MemoryStats.objects.get(memory_id=memory_id)
    assert after.reinforced_count == before.reinforced_count + 3
    assert after.confidence == pytest.approx(min(0.95, before.confidence + 0.06), abs=1e-3)
    assert AuditEvent.objects.filter(target_id=memory_id).count() == events_before + 3
    # And the chain written in one statement verifies, in id order
    assert audit_chain_verify().intact


def test_a_text_repeated_across_rows_is_redacted_and_reported_in_each(api, space):
    # Given rows that share a value holding an email (in metadata) and a plain one
    items = [{"space": "webshop", "title": f"Contact note {n}",
              "content": f"Note {n} about the vendor contact.",
              "metadata": {"contact": "jane.doe@example.com", "speaker": "Amara"}} for n in range(3)]

    # When they are written in one batch
    body = post(api, items).json()

    # Then every row reports its own redaction and stores the placeholder
    for result in body["results"]:
        assert [(e["path"], e["kind"]) for e in result["redaction_report"]] == [("metadata.contact", "email")]
        assert Memory.objects.get(id=result["id"]).metadata == {"contact": "[email]", "speaker": "Amara"}


def test_tags_are_suggested_from_the_space_in_a_batch_as_in_a_single_write(api, space):
    # Given a space whose memories carry the tags "billing" and "deploy"
    make_memory(space, tags=["billing", "deploy"])
    row = {"space": "webshop", "title": "Billing export after deploy",
           "content": "The billing export broke after the deploy; billing retried it."}

    # When the same row is written alone and inside a batch (the batch with rows of its own)
    single = api.post("/api/v1/memories/", {**row, "title": "Single: billing export after deploy"},
                      format="json").json()
    batch = post(api, [*rows(4), row]).json()

    # Then both suggest the space's tags found in the text, nothing copied from the content
    assert sorted(single["memory"]["tags"]) == ["billing", "deploy"]
    assert sorted(Memory.objects.get(id=batch["results"][4]["id"]).tags) == ["billing", "deploy"]
