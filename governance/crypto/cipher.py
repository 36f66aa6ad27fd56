"""Sealing and opening values: AES-256-GCM under a space's data key.

Layout of a sealed value: 1 byte format version | 8 bytes data-key id | 12 bytes nonce |
ciphertext and 16-byte tag. The associated data names the column (and the key id), so a
value copied into another column or re-labelled with another key fails to open.
"""

from __future__ import annotations

import json
import secrets
import struct
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from governance.crypto import datakeys
from governance.crypto.errors import CryptoError, KeyDestroyed, KeyMissing, Tampered

__all__ = [
    "CryptoError", "KeyDestroyed", "KeyMissing", "Tampered", "key_id_of", "open_bytes",
    "open_json", "open_text", "seal_bytes", "seal_json", "seal_text",
]

VERSION = 1
HEADER = struct.Struct(">BQ")
NONCE_BYTES = 12
_ciphers: dict[int, AESGCM] = {}


def _cipher(data_key_id: int) -> AESGCM:
    cipher = _ciphers.get(data_key_id)
    if cipher is None:
        cipher = AESGCM(datakeys.key_bytes(data_key_id))
        _ciphers[data_key_id] = cipher
    return cipher


def _aad(context: str, data_key_id: int) -> bytes:
    return f"sam|{context}|{data_key_id}".encode()


def seal_bytes(space_id: int | None, plaintext: bytes, *, context: str,
               data_key_id: int | None = None) -> bytes:
    """Encrypt under the space's active data key (or the given one)."""
    key_id = data_key_id if data_key_id is not None else datakeys.active_key_id(space_id)
    nonce = secrets.token_bytes(NONCE_BYTES)
    sealed = _cipher(key_id).encrypt(nonce, plaintext, _aad(context, key_id))
    return HEADER.pack(VERSION, key_id) + nonce + sealed


def key_id_of(blob: bytes | memoryview) -> int:
    version, key_id = HEADER.unpack_from(bytes(blob[:HEADER.size]))
    if version != VERSION:
        raise Tampered(f"Unknown sealed-value format {version}.")
    return key_id


def open_bytes(blob: bytes | memoryview, *, context: str) -> bytes:
    blob = bytes(blob)
    if len(blob) < HEADER.size + NONCE_BYTES + 16:
        raise Tampered(f"A sealed {context} value is truncated.")
    key_id = key_id_of(blob)
    nonce = blob[HEADER.size:HEADER.size + NONCE_BYTES]
    try:
        return _cipher(key_id).decrypt(nonce, blob[HEADER.size + NONCE_BYTES:], _aad(context, key_id))
    except InvalidTag:
        raise Tampered(
            f"A sealed {context} value failed authentication (data key {key_id}): it was altered, "
            "moved from another column, or its data key was replaced."
        ) from None


def seal_text(space_id: int | None, text: str, *, context: str) -> bytes:
    return seal_bytes(space_id, text.encode(), context=context)


def open_text(blob: bytes | memoryview | None, *, context: str) -> str | None:
    return None if blob is None else open_bytes(blob, context=context).decode()


def seal_json(space_id: int | None, value: Any, *, context: str) -> bytes:
    encoded = json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)
    return seal_bytes(space_id, encoded.encode(), context=context)


def open_json(blob: bytes | memoryview | None, *, context: str) -> Any:
    return None if blob is None else json.loads(open_bytes(blob, context=context))


def forget_ciphers() -> None:
    _ciphers.clear()
