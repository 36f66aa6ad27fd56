"""The data migrations that sealed categories, chat imports, training results, session topics
and card checks: rows stored in plaintext before them come out sealed, readable, and with
server paths taken out of import reports."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from governance.crypto import cipher, rotation
from memories.capture import uploads
from memories.models import Category, ChatImport
from prd.sessions.models import AgentSession, CardValidation, MemoryCard, SessionEvent
from retrieval.models import TrainingRun
from tests.factories import SpaceFactory, UserFactory, make_memory

BEFORE = [("memories", "0018_chat_import_started_at"), ("prd", "0005_sessions_and_cards"),
          ("retrieval", "0006_fresh_word_statistics")]
AFTER = [("memories", "0019_seal_categories_and_chat_imports"),
         ("prd", "0006_seal_session_topics_and_card_checks"), ("retrieval", "0007_seal_training_results")]


def migrate(targets) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)


def raw(table: str, column: str, pk) -> bytes:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {column} FROM {table} WHERE id = %s", [pk])
        return bytes(cursor.fetchone()[0])


@pytest.mark.django_db(transaction=True)
def test_rows_stored_before_the_migrations_come_out_sealed_and_readable():
    # Given rows of every table the migrations seal, written through the models as they are now
    space = SpaceFactory(slug="premigration")
    user = UserFactory(username="premigrator")
    memory = make_memory(space, title="Deploy checklist", content="Pin psycopg before deploying.")
    category = Category.objects.create(space=space, name="deploys", display_name="Deploy notes",
                                       description="How we ship", keywords=["deploy", "release"])
    imported = ChatImport.objects.create(space=space, source="jsonl", file_name="history.jsonl",
                                         created_by=user)
    run = TrainingRun.objects.create(memory=memory, ran_at=memory.created_at, examples=1, passed=0,
                                     pass_rate=0.0, results=[{"rank": None, "reason": "not found"}])
    session = AgentSession.objects.create(space=space, key="k1", title="Fix CI")
    event = SessionEvent.objects.create(session=session, sequence=1, event_id="e1", event_type="chat_turn",
                                        source="chat", ts=memory.created_at, topic_tags=["ci", "deploy"],
                                        hash="h")
    card = MemoryCard.objects.create(key="card:x", space=space, card_type="procedure",
                                     evidence_until=memory.created_at, checked_at=memory.created_at,
                                     ttl_days=30, scope_branch="main", validator="sam.rules.ttl")
    check = CardValidation.objects.create(card=card, status="pass", validator="ci",
                                          checked_at=memory.created_at)

    # ...then the schema taken back to before the migrations (the values opened into plaintext),
    # and an old-style report with server paths written as it was stored then
    migrate(BEFORE)
    upload = uploads.folder(imported.pk)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_chatimport SET file_name = %s, report = %s, error = %s WHERE id = %s",
                       ["exports/history.jsonl",
                        json.dumps({"errors": [{"origin": f"{upload}/unpacked/a.jsonl", "reason": "bad"}]}),
                        f"failed in {upload}/history.jsonl", imported.pk])
        cursor.execute("SELECT display_name, topic_tags FROM memories_category, prd_sessionevent "
                       "WHERE memories_category.id = %s AND prd_sessionevent.id = %s",
                       [category.pk, event.pk])
        assert cursor.fetchone() == ("Deploy notes", ["ci", "deploy"])

    # When the migrations run forward
    migrate(AFTER)

    # Then every value is sealed in the database and reads back as it was, paths taken out
    assert cipher.key_id_of(raw("memories_category", "display_name", category.pk))
    assert cipher.key_id_of(raw("prd_sessionevent", "topic_tags", event.pk))
    category = Category.objects.get(pk=category.pk)
    assert (category.display_name, category.description, category.keywords) == (
        "Deploy notes", "How we ship", ["deploy", "release"])
    imported = ChatImport.objects.get(pk=imported.pk)
    assert imported.file_name == "history.jsonl"
    assert imported.report == {"errors": [{"origin": "a.jsonl", "reason": "bad"}]}
    assert imported.error == "failed in history.jsonl"
    assert TrainingRun.objects.get(pk=run.pk).results == [{"rank": None, "reason": "not found"}]
    assert SessionEvent.objects.get(pk=event.pk).topic_tags == ["ci", "deploy"]
    card = MemoryCard.objects.get(pk=card.pk)
    assert (card.scope_branch, card.validator) == ("main", "sam.rules.ttl")
    assert CardValidation.objects.get(pk=check.pk).validator == "ci"


@pytest.mark.django_db
def test_key_rotation_re_seals_the_newly_sealed_columns_too():
    # Given a session event with topic tags and a category, sealed under the space's key
    space = SpaceFactory(slug="rotating")
    session = AgentSession.objects.create(space=space, key="k2", title="Rotate")
    event = SessionEvent.objects.create(session=session, sequence=1, event_id="e1", event_type="chat_turn",
                                        source="chat", ts=session.created_at, topic_tags=["keys"], hash="h")
    category = Category.objects.create(space=space, name="keys", display_name="Key notes", keywords=["key"])

    # When the space's key is rotated and everything re-encrypted (the append-only trigger of
    # session events lets the sealed columns, topic tags among them, be re-sealed)
    new_id = rotation.rotate_data_key(space.pk)
    rotation.reencrypt(batch=10)

    # Then both are sealed under the new key and read as before
    assert cipher.key_id_of(raw("prd_sessionevent", "topic_tags", event.pk)) == new_id
    assert cipher.key_id_of(raw("memories_category", "keywords", category.pk)) == new_id
    assert SessionEvent.objects.get(pk=event.pk).topic_tags == ["keys"]
    assert Category.objects.get(pk=category.pk).keywords == ["key"]
