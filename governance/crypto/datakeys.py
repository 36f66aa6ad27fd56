"""Data keys: create, unwrap and cache them; derive the search-index key of each.

Unwrapped keys are cached per process. The active key of a space is cached for a short
time only, so every process starts sealing with a new key soon after a rotation.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.db import IntegrityError, transaction

from governance.crypto import keyring
from governance.crypto.errors import KeyDestroyed, KeyMissing

ACTIVE_TTL_SECONDS = 30
_lock = threading.Lock()
_unwrapped: dict[int, bytes] = {}
_active: dict[int | None, tuple[float, int]] = {}
_live: dict[int | None, tuple[float, tuple[int, ...]]] = {}


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
    from governance.models import DataKey

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
    from governance.models import DataKey

    master = keyring.primary()
    raw = secrets.token_bytes(32)
    row = DataKey.objects.create(space_id=space_id, master_key_id=master.key_id,
                                 wrapped=wrap(raw, space_id, master))
    with _lock:
        _unwrapped[row.pk] = raw
    return row.pk


def active_key_id(space_id: int | None) -> int:
    """The id of the space's active data key, creating it on first use."""
    cached = _active.get(space_id)
    now = time.monotonic()
    if cached and cached[0] > now:
        return cached[1]
    from governance.models import DataKey, DataKeyState

    found = DataKey.objects.filter(space_id=space_id, state=DataKeyState.ACTIVE).values_list(
        "pk", flat=True).first()
    if found is None:
        try:
            with transaction.atomic():
                found = create(space_id)
        except IntegrityError:
            # Another writer created it first; use theirs.
            found = DataKey.objects.get(space_id=space_id, state=DataKeyState.ACTIVE).pk
    with _lock:
        _active[space_id] = (now + ACTIVE_TTL_SECONDS, found)
    return found


def live_key_ids(space_id: int | None) -> tuple[int, ...]:
    """Every data key of the space that may still have sealed or indexed values."""
    cached = _live.get(space_id)
    now = time.monotonic()
    if cached and cached[0] > now:
        return cached[1]
    from governance.models import DataKey

    ids = tuple(DataKey.objects.filter(space_id=space_id).order_by("pk").values_list("pk", flat=True))
    if not ids:
        ids = (active_key_id(space_id),)
    with _lock:
        _live[space_id] = (now + ACTIVE_TTL_SECONDS, ids)
    return ids


def forget_cached(space_id: int | None = None) -> None:
    """Drop cached keys (after a rotation or destruction in this process)."""
    with _lock:
        if space_id is None:
            _unwrapped.clear()
            _index_keys.clear()
            _active.clear()
            _live.clear()
        else:
            _active.pop(space_id, None)
            _live.pop(space_id, None)


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


def keyed_digest(space_id: int | None, text: str) -> str:
    """A keyed hash of `text` for equality checks (content hashes) that a dump cannot test guesses against."""
    key_id = active_key_id(space_id)
    return hmac.new(cached_index_key(key_id), b"digest|" + text.encode(), hashlib.sha256).hexdigest()

