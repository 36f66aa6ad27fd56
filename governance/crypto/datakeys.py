"""Data keys: create, unwrap and cache them; derive the search-index key of each.

Unwrapped keys are cached per process. Which key is a space's active one is not: forget
and space delete destroy keys from any process, and a value sealed with a destroyed key
can never be read. So a transaction that seals for a space looks its key up once, under a
lock on the space row that forget and delete must wait for (see `active_key_id`). The
system key is never destroyed, only retired, so its id is cached for a short time, and
every process starts sealing with a new one soon after a rotation.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.db import IntegrityError, connection, transaction

from core.models import Space
from governance.crypto import keyring
from governance.crypto.errors import KeyDestroyed, KeyMissing
from governance.crypto.events import key_changed
from governance.models import DataKey, DataKeyState

ACTIVE_TTL_SECONDS = 30
_lock = threading.Lock()
_unwrapped: dict[int, bytes] = {}
_active: dict[int | None, tuple[float, int]] = {}
_live: dict[int | None, tuple[float, tuple[int, ...]]] = {}
# Per thread (so per connection): space id -> (marker of the transaction, key id it holds).
_held = threading.local()


def _wrap_aad(space_id: int | None) -> bytes:
    return b"sam-datakey|" + str(space_id or "system").encode()


def wrap(raw: bytes, space_id: int | None, master: keyring.MasterKey) -> bytes:
    nonce = secrets.token_bytes(12)
    return nonce + AESGCM(master.key).encrypt(nonce, raw, _wrap_aad(space_id))


def unwrap(wrapped: bytes, space_id: int | None, master_key_id: str) -> bytes:
    master = keyring.by_id(master_key_id)
    if master is None:
        raise KeyMissing(
            f"Master key '{master_key_id}' is not configured; it wraps a data key of "
            f"space {space_id or 'system'}. Add it to SAM_MASTER_KEYS (or the keys file)."
        )
    wrapped = bytes(wrapped)
    try:
        return AESGCM(master.key).decrypt(wrapped[:12], wrapped[12:], _wrap_aad(space_id))
    except InvalidTag:
        raise KeyMissing(
            f"Master key '{master_key_id}' does not open this data key: the configured key "
            "with that id is not the one that wrapped it."
        ) from None


def key_bytes(data_key_id: int) -> bytes:
    """The raw data key, unwrapped once per process."""
    raw = _unwrapped.get(data_key_id)
    if raw is not None:
        return raw

    row = DataKey.objects.filter(pk=data_key_id).values("space_id", "master_key_id", "wrapped").first()
    if row is None:
        raise KeyDestroyed(
            f"Data key {data_key_id} no longer exists (its space was deleted or forgotten); "
            "values sealed with it cannot be read."
        )
    raw = unwrap(row["wrapped"], row["space_id"], row["master_key_id"])
    with _lock:
        _unwrapped[data_key_id] = raw
    return raw


def create(space_id: int | None) -> int:
    """A new active data key for the space (the caller retires the old one first)."""
    master = keyring.primary()
    raw = secrets.token_bytes(32)
    row = DataKey.objects.create(space_id=space_id, master_key_id=master.key_id,
                                 wrapped=wrap(raw, space_id, master))
    with _lock:
        _unwrapped[row.pk] = raw
    # Keys are made by SAM itself (on a space's first sealed write, or a rotation).
    key_changed.send(sender=DataKey, action="key_create", target=row, after={"master_key_id": master.key_id})
    return row.pk


def active_key_id(space_id: int | None) -> int:
    """The id of the space's active data key, creating it on first use.

    Inside a transaction, the first call for a space locks the space row FOR KEY SHARE,
    then reads its active key (two indexed queries); later calls in the same transaction
    reuse that answer. Forget and space delete lock the row FOR UPDATE before destroying
    keys (governance.retention), so the key stays alive until this transaction ends, and
    a transaction that had to wait for a forget reads the state after it: the new key, or
    KeyDestroyed when the space itself is gone. FOR KEY SHARE conflicts only with FOR
    UPDATE and deletes, so writers in one space never wait for each other here.

    Outside a transaction nothing can be held, so each call reads the key afresh. The
    system key (space None) is cached for ACTIVE_TTL_SECONDS: it is retired, never destroyed.
    """
    if space_id is None:
        cached = _active.get(None)
        now = time.monotonic()
        if cached and cached[0] > now:
            return cached[1]
        found = _find_or_create(None)
        with _lock:
            _active[None] = (now + ACTIVE_TTL_SECONDS, found)
        return found
    if connection.in_atomic_block:
        return _held_key_id(space_id)
    return _find_or_create(space_id)


def _find_or_create(space_id: int | None) -> int:
    # The stubs refuse space_id=None, which Django reads as IS NULL.
    found = (DataKey.objects.filter(space_id=space_id, state=DataKeyState.ACTIVE)  # type: ignore[misc]
             .values_list("pk", flat=True).first())
    return found if found is not None else _create_active(space_id)


def _create_active(space_id: int | None) -> int:
    try:
        with transaction.atomic():
            return create(space_id)
    except IntegrityError:
        # Another writer created it first; use theirs.
        return DataKey.objects.get(space_id=space_id, state=DataKeyState.ACTIVE).pk  # type: ignore[misc]


class _TransactionMarker:
    """A no-op on-commit callback. Django drops it when the transaction (or the savepoint
    it was registered in) ends, exactly when the row locks taken with it are released."""

    def __call__(self) -> None:
        pass


def _held_key_id(space_id: int) -> int:
    held: dict[int, tuple[_TransactionMarker, int]] = _held.__dict__.setdefault("keys", {})
    entry = held.get(space_id)
    # Items are (savepoint ids, func, robust); the stubs know only the first two.
    if entry is not None and any(pending[1] is entry[0] for pending in connection.run_on_commit):
        return entry[1]
    space_table = Space._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {space_table} WHERE id = %s FOR KEY SHARE", [space_id])
        if cursor.fetchone() is None:
            raise KeyDestroyed(f"Space {space_id} no longer exists (deleted); nothing can be sealed for it.")
    # A separate statement, so under READ COMMITTED it sees what a forget we waited for
    # committed. (In the locking statement itself, only the locked row is re-read after
    # the wait; a joined key row would still be the one from before the forget.)
    found = _find_or_create(space_id)
    marker = _TransactionMarker()
    transaction.on_commit(marker)
    held[space_id] = (marker, found)
    return found


def live_key_ids(space_id: int | None) -> tuple[int, ...]:
    """Every data key of the space that may still have sealed or indexed values."""
    cached = _live.get(space_id)
    now = time.monotonic()
    if cached and cached[0] > now:
        return cached[1]

    ids = tuple(DataKey.objects.filter(space_id=space_id)  # type: ignore[misc]  # IS NULL for None
                .order_by("pk").values_list("pk", flat=True))
    if not ids:
        ids = (active_key_id(space_id),)
    with _lock:
        _live[space_id] = (now + ACTIVE_TTL_SECONDS, ids)
    return ids


def live_key_ids_many(space_ids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """live_key_ids() of many spaces, the ones not cached read in one query (a recall over
    a thousand spaces would otherwise ask a thousand times every ACTIVE_TTL_SECONDS)."""
    now = time.monotonic()
    found: dict[int, tuple[int, ...]] = {}
    missing: list[int] = []
    for space_id in space_ids:
        cached = _live.get(space_id)
        if cached and cached[0] > now:
            found[space_id] = cached[1]
        else:
            missing.append(space_id)
    if missing:
        read: dict[int, list[int]] = {}
        for space_id, key_id in (DataKey.objects.filter(space_id__in=missing).order_by("pk")
                                 .values_list("space_id", "pk")):
            read.setdefault(space_id, []).append(key_id)
        for space_id in missing:
            # A space with no key yet gets its active one, as live_key_ids() does.
            ids = tuple(read[space_id]) if space_id in read else live_key_ids(space_id)
            with _lock:
                _live[space_id] = (now + ACTIVE_TTL_SECONDS, ids)
            found[space_id] = ids
    return found


def forget_cached(space_id: int | None = None) -> None:
    """Drop cached keys (after a rotation or destruction in this process)."""
    held: dict = _held.__dict__.setdefault("keys", {})
    with _lock:
        if space_id is None:
            _unwrapped.clear()
            _index_keys.clear()
            _active.clear()
            _live.clear()
            held.clear()
        else:
            _active.pop(space_id, None)
            _live.pop(space_id, None)
            held.pop(space_id, None)


def index_key(data_key_id: int) -> bytes:
    """The key for search tokens of values sealed under `data_key_id` (derived, never stored)."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
                info=b"sam-search-index-v1").derive(key_bytes(data_key_id))


_index_keys: dict[int, bytes] = {}


def cached_index_key(data_key_id: int) -> bytes:
    key = _index_keys.get(data_key_id)
    if key is None:
        key = index_key(data_key_id)
        _index_keys[data_key_id] = key
    return key


def token(data_key_id: int, word: str) -> str:
    """The opaque search token of `word` under a data key: 96 bits of HMAC-SHA256, hex."""
    return hmac.new(cached_index_key(data_key_id), word.encode(), hashlib.sha256).hexdigest()[:24]


def digest_under(data_key_id: int, text: str, *, purpose: bytes = b"digest") -> str:
    """A keyed hash of `text` under one data key's index key, in the domain `purpose`.

    Equal texts hash equal under the same key and purpose; nobody without the key can
    test a guess against the hash, and once the key is destroyed nobody can at all.
    """
    return hmac.new(cached_index_key(data_key_id), purpose + b"|" + text.encode(),
                    hashlib.sha256).hexdigest()


def keyed_digest(space_id: int | None, text: str) -> str:
    """A keyed hash of `text` for equality checks (content hashes) that a dump cannot test guesses against."""
    return digest_under(active_key_id(space_id), text)

