"""audit_record appends hash-chained events in the caller's transaction."""

from __future__ import annotations

import hashlib
import itertools
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection, transaction

from governance.access import SYSTEM
from governance.audit.chain import GENESIS_HASH, HASHED_FIELDS, digest_input, event_digest
from governance.audit.models import AppendOnlyError, AuditEvent
from governance.audit.request_id import request_id_bound
from governance.audit.services import audit_record
from tests.factories import UserFactory

VALUES = {
    "at": datetime(2026, 11, 22, 12, 0, 0, 250000, tzinfo=UTC),
    "action": "edit",
    "actor_id": 7,
    "actor_label": "dana",
    "space_id": 3,
    "space_slug": "webshop",
    "target_type": "memory",
    "target_id": "mem_01",
    "request_id": "req-1",
    "payload": b"\x01sealed",  # the stored payload is sealed bytes
}


def test_the_digest_input_is_the_documented_canonical_json():
    expected = (
        '{"event":{"action":"edit","actor_id":7,"actor_label":"dana",'
        '"at":"2026-11-22T12:00:00.250000Z","payload":"b64:AXNlYWxlZA==",'
        '"request_id":"req-1","space_id":3,"space_slug":"webshop",'
        '"target_id":"mem_01","target_type":"memory"},'
        '"prev_hash":"' + GENESIS_HASH + '","v":1}'
    ).encode()
    assert digest_input(GENESIS_HASH, VALUES) == expected
    assert event_digest(GENESIS_HASH, VALUES) == hashlib.sha256(expected).hexdigest()


@pytest.mark.parametrize("name", HASHED_FIELDS)
def test_changing_any_stored_column_changes_the_digest(name):
    changed = {**VALUES, name: b"\x01other" if name == "payload" else None}
    assert event_digest(GENESIS_HASH, changed) != event_digest(GENESIS_HASH, VALUES)


def test_canonical_values_read_back_the_same_from_json_columns():
    values = {**VALUES, "payload": {"big": 1e20, "one": 1.0, "tenth": 0.1, "flag": True,
                                    "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)}}
    # What a jsonb column hands back for the same document.
    read_back = {**VALUES, "payload": {"big": 10**20, "one": 1, "tenth": 0.1, "flag": True,
                                       "when": datetime(2026, 1, 2, 4, 4, 5, tzinfo=timezone(
                                           timedelta(hours=1)))}}
    assert event_digest(GENESIS_HASH, values) == event_digest(GENESIS_HASH, read_back)
    with pytest.raises(ValueError, match="NaN"):
        event_digest(GENESIS_HASH, {**VALUES, "payload": {"x": float("nan")}})
    with pytest.raises(ValueError, match="timezone-aware"):
        event_digest(GENESIS_HASH, {**VALUES, "at": datetime(2026, 1, 1)})


def test_the_digest_depends_on_the_previous_hash():
    assert event_digest("a" * 64, VALUES) != event_digest("b" * 64, VALUES)


def test_the_digest_refuses_missing_or_unknown_columns():
    with pytest.raises(ValueError, match="missing"):
        event_digest(GENESIS_HASH, {k: v for k, v in VALUES.items() if k != "payload"})
    with pytest.raises(ValueError, match="extra"):
        event_digest(GENESIS_HASH, {**VALUES, "id": 1})


def test_each_event_links_to_the_one_before(chain):
    assert chain[0].prev_hash == GENESIS_HASH
    for previous, event in itertools.pairwise(chain):
        assert event.prev_hash == previous.hash
    stored = list(AuditEvent.objects.order_by("id"))
    assert [e.hash for e in stored] == [e.hash for e in chain]
    assert all(e.computed_hash() == e.hash for e in stored)
    assert [e.at for e in stored] == sorted(e.at for e in stored)


def test_the_payload_is_stored_sealed_and_hashed_as_stored(space):
    event = audit_record(
        "import", actor=SYSTEM, space=space, target_type="space", target_id="1",
        after={"big": 1e20, "tenth": 0.1, "text": "zanzibar é ✓ \"q\"",
               "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "amount": Decimal("2.50"),
               "nested": [{"b": 1, "a": [None, True]}]},
    )
    with connection.cursor() as cursor:
        cursor.execute("SELECT payload FROM audit_auditevent WHERE id = %s", [event.pk])
        raw = bytes(cursor.fetchone()[0])
    stored = AuditEvent.objects.get(pk=event.pk)

    assert b"zanzibar" not in raw
    assert stored.computed_hash() == event.hash
    after = stored.payload_data["after"]
    assert after["when"] == "2026-01-02T03:04:05Z"
    assert after["amount"] == "2.50"
    assert (after["big"], after["text"]) == (1e20, "zanzibar é ✓ \"q\"")


def test_actors_are_recorded_by_id_and_name_at_the_time(db):
    dana = UserFactory(username="dana")
    by_user = audit_record("edit", actor=dana, target_type="memory", target_id="m1")
    by_system = audit_record("edit", actor=SYSTEM, target_type="memory", target_id="m1")
    by_nobody = audit_record("edit", actor=AnonymousUser(), target_type="memory", target_id="m1")
    by_none = audit_record("edit", actor=None, target_type="memory", target_id="m1")

    assert (by_user.actor_id, by_user.actor_label) == (dana.pk, "dana")
    assert (by_system.actor_id, by_system.actor_label) == (None, "system")
    assert (by_nobody.actor_id, by_nobody.actor_label) == (None, "anonymous")
    assert (by_none.actor_id, by_none.actor_label) == (None, "anonymous")


def test_a_target_instance_gives_type_id_and_space(space):
    token_user = UserFactory(username="tok")
    event = audit_record("create", actor=SYSTEM, target=space, after={"slug": space.slug})
    assert (event.target_type, event.target_id) == ("space", str(space.pk))
    assert (event.space_id, event.space_slug) == (space.pk, "webshop")

    other = audit_record("token_issue", actor=SYSTEM, target=token_user, target_type="user")
    assert (other.target_type, other.target_id) == ("user", str(token_user.pk))
    assert other.space_id is None
    assert other.space_slug == ""


def test_a_target_without_pk_must_be_named_by_id(db):
    # What .delete() leaves behind: an instance whose pk is None.
    user = UserFactory.build(username="gone")
    with pytest.raises(ValueError, match="no pk"):
        audit_record("delete", actor=SYSTEM, target=user)
    event = audit_record("delete", actor=SYSTEM, target=user, target_id="41")
    assert (event.target_type, event.target_id) == ("user", "41")


def test_an_unknown_action_is_refused_and_nothing_is_stored(db):
    with pytest.raises(ValueError, match="tweak"):
        audit_record("tweak", actor=SYSTEM)
    assert not AuditEvent.objects.exists()


def test_a_rolled_back_write_leaves_no_audit_row(chain):
    class Boom(Exception):
        pass

    def write_then_fail() -> None:
        with transaction.atomic():
            audit_record("delete", actor=SYSTEM, target_type="memory", target_id="mem_x")
            raise Boom

    with pytest.raises(Boom):
        write_then_fail()
    assert AuditEvent.objects.count() == 5
    after = audit_record("edit", actor=SYSTEM, target_type="memory", target_id="mem_y")
    assert after.prev_hash == chain[-1].hash


def test_the_request_id_defaults_to_the_bound_one(db):
    outside = audit_record("edit", actor=SYSTEM)
    with request_id_bound("job-42"):
        inside = audit_record("edit", actor=SYSTEM)
        explicit = audit_record("edit", actor=SYSTEM, request_id="given")
    assert (outside.request_id, inside.request_id, explicit.request_id) == ("", "job-42", "given")


def test_the_payload_holds_only_what_applies(db):
    event = audit_record("archive", actor=SYSTEM, changes=[{"path": "archive_flag", "before": False,
                                                            "after": True}], note="superseded")
    assert event.payload_data == {"changes": [{"path": "archive_flag", "before": False, "after": True}],
                             "note": "superseded"}


def test_the_orm_refuses_to_change_or_delete_events(chain):
    event = chain[0]
    event.actor_label = "someone else"
    with pytest.raises(AppendOnlyError):
        event.save()
    with pytest.raises(AppendOnlyError):
        event.delete()
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.filter(pk=event.pk).update(actor_label="x")
    with pytest.raises(AppendOnlyError):
        AuditEvent.objects.all().delete()
    assert AuditEvent.objects.get(pk=event.pk).actor_label == "system"
