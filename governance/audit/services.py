"""Appending to the audit log.

`audit_record` is the one way rows get into the log. Call it from a service, inside the
transaction that makes the change, after the change's own row locks are taken: the
append then commits or rolls back with the change, and the chain lock it takes is held
until that commit (see docs/audit.md, "For callers").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, transaction
from django.db.models import Field, Model
from django.utils import timezone

from core.actor import Actor
from core.models import Space
from governance import access
from governance.audit import digests
from governance.audit.chain import GENESIS_HASH, HASHED_FIELDS
from governance.audit.models import PAYLOAD_CONTEXT, AuditAction, AuditEvent
from governance.audit.request_id import current_request_id
from governance.crypto import cipher, datakeys

# pg_advisory_xact_lock key that serialises appends: the bytes of "samaudit" as a bigint.
CHAIN_LOCK_KEY = int.from_bytes(b"samaudit", "big")


def audit_record(
    action: str,
    *,
    actor: Actor,
    space=None,
    target: Model | None = None,
    target_type: str | None = None,
    target_id: str | int | None = None,
    before: Any = None,
    after: Any = None,
    changes: list[dict[str, Any]] | None = None,
    note: str = "",
    request_id: str | None = None,
    digest_text: bool = False,
) -> AuditEvent:
    """Append one event to the audit chain and return it.

    - `action`: an AuditAction value; anything else raises ValueError.
    - `actor`: a user, None / AnonymousUser, or governance.access.SYSTEM.
    - `target`: a saved model instance (type = model name, id = pk); or name it with
      `target_type` and `target_id`, which also override what `target` gives. Record a
      delete before calling `.delete()`, which clears the instance's pk.
    - `space`: the Space the change happened in; when omitted it is taken from a Space
      target or from the target's `space`.
    - `before`, `after`, `changes`, `note`: the payload, JSON-serialisable (datetimes,
      decimals and UUIDs become strings), stored sealed under the space's data key.
    - `request_id`: defaults to the id of the request being served (RequestIdMiddleware).
    - `digest_text`: record what happened without the text. Labels of the target type
      (a memory's version, kind, reliability...) stay as they are; every other value of
      `before`, `after` and `changes`, each change's reason and the note become keyed
      fingerprints (governance.audit.digests). Memory writes use this, so what retention
      or a hard delete removed does not live on in the log.

    Runs in the caller's transaction (starting one if there is none), so a rolled-back
    write leaves no audit row.
    """
    return audit_record_many([AuditRecord(
        action, actor=actor, space=space, target=target, target_type=target_type, target_id=target_id,
        before=before, after=after, changes=changes, note=note, request_id=request_id,
        digest_text=digest_text,
    )])[0]


@dataclass
class AuditRecord:
    """One event to append: the arguments of `audit_record`."""

    action: str
    actor: Actor
    space: Any = None
    target: Model | None = None
    target_type: str | None = None
    target_id: str | int | None = None
    before: Any = None
    after: Any = None
    changes: list[dict[str, Any]] | None = None
    note: str = ""
    request_id: str | None = None
    digest_text: bool = False


def audit_record_many(records: Sequence[AuditRecord]) -> list[AuditEvent]:
    """Append `records` to the audit chain in order, in one statement; returns the events.

    The same events, hashes and links as one `audit_record` call per record (each event's
    prev_hash is the hash of the one before it), at the cost of one lock, one head read
    and one insert for the whole batch: a bulk write audits every row it makes.
    """
    if not records:
        return []
    built = []
    for record in records:
        spaces = _space_columns(record.space if record.space is not None else _space_of(record.target))
        payload = _payload(before=record.before, after=record.after, changes=record.changes,
                           note=record.note)
        targets = _target_columns(record.target, record.target_type, record.target_id)
        event = AuditEvent(
            action=AuditAction(record.action).value,
            **_actor_columns(record.actor),
            **targets,
            **spaces,
            request_id=(record.request_id if record.request_id is not None
                        else (current_request_id() or "")),
        )
        built.append((event, payload, record.digest_text))
    events = []
    # savepoint=False: inside a caller's transaction this costs no extra round trips; a
    # failure here fails the caller's write, which is what an audited write should do.
    with transaction.atomic(savepoint=False):
        for event, payload, digest_text in built:
            # Sealed inside the transaction, where the space's key is checked and held against
            # a concurrent forget (governance.crypto.datakeys), but before the chain lock.
            event.payload = _seal(payload, space_id=event.space_id, digest_text=digest_text,
                                  target_type=event.target_type)
            # Shape checks only; no query (full_clean would run one per check constraint).
            event.clean_fields(exclude=["at", "prev_hash", "hash"])
            events.append(event)
        with connection.cursor() as cursor:
            # Held until the transaction ends, so no other append can read the same head.
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [CHAIN_LOCK_KEY])
        # A separate statement, so under READ COMMITTED its snapshot is taken after the
        # lock was granted and sees the event of whoever held it before.
        head = AuditEvent.objects.order_by("-id").values_list("hash", flat=True).first()
        previous = head or GENESIS_HASH
        for event in events:
            event.prev_hash = previous
            # Stamped under the lock, so times rise with the chain as long as the clock does.
            event.at = timezone.now()
            _fix_stored_values(event)
            event.hash = previous = event.computed_hash()
        if len(events) == 1:
            # raw: store exactly the values just hashed, without running pre_save again.
            events[0].save_base(raw=True, force_insert=True)
        else:
            # One multi-row INSERT: Postgres draws the ids in row order, so id order is chain
            # order (what verification checks). The fields' pre_save hands back the values
            # already fixed and hashed above.
            AuditEvent.objects.bulk_create(events)
    return events


def _fix_stored_values(event: AuditEvent) -> None:
    """Replace each hashed value by what its field hands the database.

    For today's fields that is the value itself (the payload arrives sealed). A field type
    that transformed values on the way in would otherwise be hashed as one thing and
    stored as another.
    """
    for name in HASHED_FIELDS:
        field = cast("Field[Any, Any]", AuditEvent._meta.get_field(name))  # hashed: concrete fields
        setattr(event, field.attname, field.pre_save(event, add=True))


def _actor_columns(actor: Actor) -> dict[str, Any]:
    user = access.user_or_none(actor)
    if user is not None:
        return {"actor_id": user.pk, "actor_label": user.get_username()}
    return {"actor_id": None, "actor_label": "system" if actor is access.SYSTEM else "anonymous"}


def _target_columns(target: Model | None, target_type: str | None,
                    target_id: str | int | None) -> dict[str, str]:
    kind, pk = "", ""
    if target is not None:
        if target.pk is None and target_id is None:
            raise ValueError("The target has no pk (deleted?): record before deleting, or pass target_id.")
        kind, pk = target._meta.model_name or "", str(target.pk)
    if target_type is not None:
        kind = target_type
    if target_id is not None:
        pk = str(target_id)
    return {"target_type": kind, "target_id": pk}


def _space_of(target: Model | None):
    if target is None:
        return None
    if isinstance(target, Space):
        return target
    if getattr(target, "space_id", None) is not None:
        return target.space  # type: ignore[attr-defined]
    return None


def _space_columns(space) -> dict[str, Any]:
    if space is None:
        return {"space_id": None, "space_slug": ""}
    return {"space_id": space.pk, "space_slug": space.slug}


def _seal(payload: dict[str, Any], *, space_id: int | None, digest_text: bool, target_type: str) -> bytes:
    """The sealed payload. Digests and seal share one data key, so the digests can be
    checked exactly as long as the payload can be opened."""
    key_id = datakeys.active_key_id(space_id)
    if digest_text:
        payload = digests.digest_payload(payload, data_key_id=key_id, target_type=target_type)
    # The encoding of cipher.seal_json, with the key chosen above.
    encoded = json.dumps(payload, separators=(",", ":"), sort_keys=True, default=str).encode()
    return cipher.seal_bytes(space_id, encoded, context=PAYLOAD_CONTEXT, data_key_id=key_id)


def _payload(*, before: Any, after: Any, changes: Any, note: str) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    for key, value in (("before", before), ("after", after), ("changes", changes)):
        if value is not None:
            payload[key] = value
    if note:
        payload["note"] = note
    # Plain JSON data, so what payload_data hands back equals what was recorded
    # (a datetime comes back as the ISO string DjangoJSONEncoder made of it).
    return json.loads(json.dumps(payload, cls=DjangoJSONEncoder, allow_nan=False))
