"""The hash chain: one digest function over an event's stored column values.

Every event stores `hash = event_digest(prev_hash, stored values)` and the previous
event's hash as `prev_hash`, so changing, removing or reordering a stored row breaks the
chain at that row (see docs/audit.md for the exact digest input).

The digest reads the values *as stored*, column by column, through one canonical
serialisation. A column that later changes type (the payload becomes ciphertext) only
needs `canonical_value` to know the new type; the chain logic stays as it is.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

# The prev_hash of the first event.
GENESIS_HASH = "0" * 64
# Bumped if the digest input ever changes shape; part of every digest.
DIGEST_VERSION = 1
# The columns an event's hash covers: all of them but id, prev_hash (digested separately)
# and hash itself. The id is left out on purpose: order is what the prev_hash links say,
# and verification reports an id order that disagrees with them as a reordering.
HASHED_FIELDS = (
    "at", "action", "actor_id", "actor_label", "space_id", "space_slug",
    "target_type", "target_id", "request_id", "payload",
)


def canonical_value(value: Any) -> Any:
    """`value` as plain JSON data that reads back the same from the database.

    - datetimes: ISO 8601 in UTC with microseconds and a `Z` (Postgres keeps microseconds);
    - integral floats become ints, because jsonb stores numbers as numeric and hands
      1e20 back as 100000000000000000000 (an int to Python);
    - bytes (a future encrypted column): `b64:` + base64;
    - mappings get string keys, sequences become lists.
    """
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError("Audit values cannot hold NaN or infinity.")
        return int(value) if value.is_integer() else value
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError("Audit times must be timezone-aware.")
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "b64:" + base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, Mapping):
        return {str(key): canonical_value(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical_value(item) for item in value]
    raise TypeError(f"Audit values cannot hold {type(value).__name__}.")


def digest_input(prev_hash: str, values: Mapping[str, Any]) -> bytes:
    """The exact bytes an event's hash is taken over."""
    if set(values) != set(HASHED_FIELDS):
        missing = sorted(set(HASHED_FIELDS) - set(values))
        extra = sorted(set(values) - set(HASHED_FIELDS))
        raise ValueError(f"Digest needs exactly {HASHED_FIELDS}; missing {missing}, extra {extra}.")
    document = {
        "v": DIGEST_VERSION,
        "prev_hash": prev_hash,
        "event": {name: canonical_value(values[name]) for name in HASHED_FIELDS},
    }
    return json.dumps(
        document, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False
    ).encode("ascii")


def event_digest(prev_hash: str, values: Mapping[str, Any]) -> str:
    """Hex SHA-256 of an event's stored values chained to the previous event's hash."""
    return hashlib.sha256(digest_input(prev_hash, values)).hexdigest()
