"""Field encryption at rest: envelope encryption with one data key per space.

- Master keys come from the environment or a secrets file (governance.crypto.keyring);
  several can be configured at once so they can rotate.
- Each space has an active data key (DataKey), stored only wrapped by a master key.
- Sealed columns hold version | data-key id | nonce | AES-256-GCM ciphertext+tag, with
  the column's name as associated data, so a value cannot be moved to another column.
- Full-text search and the exact-phrase channel index keyed HMACs of the stemmed words
  and phrases (governance.crypto.search), never the words themselves.
"""

from governance.crypto.cipher import (
    CryptoError,
    KeyDestroyed,
    KeyMissing,
    Tampered,
    open_bytes,
    open_json,
    open_text,
    seal_bytes,
    seal_json,
    seal_text,
)
from governance.crypto.datakeys import keyed_digest

__all__ = [
    "CryptoError", "KeyDestroyed", "KeyMissing", "Tampered", "keyed_digest", "open_bytes", "open_json",
    "open_text", "seal_bytes", "seal_json", "seal_text",
]
