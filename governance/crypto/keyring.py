"""Master keys: where they come from and which one wraps new data keys.

Sources, first found wins:
1. SAM_MASTER_KEYS: "id:key[,id:key...]", each key 32 bytes in URL-safe base64;
2. SAM_MASTER_KEYS_FILE: a file with one "id:key" per line (# comments allowed);
3. var/master_keys, generated once (mode 0600) so a local install works with no setup.

The first key listed is the primary: it wraps every new data key. The others still
unwrap data keys they wrapped earlier, until `manage.py sam_keys rewrap` moves those
to the primary and the old key can be removed.
"""

from __future__ import annotations

import base64
import os
import secrets
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

KEY_BYTES = 32


@dataclass(frozen=True)
class MasterKey:
    key_id: str
    key: bytes

    def __repr__(self) -> str:  # never print key material
        return f"MasterKey({self.key_id!r})"


def encode_key(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def new_key_line(key_id: str) -> str:
    return f"{key_id}:{encode_key(secrets.token_bytes(KEY_BYTES))}"


def parse(text: str, *, source: str) -> tuple[MasterKey, ...]:
    keys: list[MasterKey] = []
    for number, line in enumerate(text.replace(",", "\n").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key_id, sep, encoded = line.partition(":")
        if not sep or not key_id.strip():
            raise ImproperlyConfigured(f"{source}: entry {number} is not 'id:key'.")
        try:
            raw = base64.urlsafe_b64decode(encoded.strip() + "=" * (-len(encoded.strip()) % 4))
        except ValueError:
            raise ImproperlyConfigured(f"{source}: key '{key_id}' is not base64.") from None
        if len(raw) != KEY_BYTES:
            raise ImproperlyConfigured(f"{source}: key '{key_id}' must be {KEY_BYTES} bytes.")
        keys.append(MasterKey(key_id.strip(), raw))
    if not keys:
        raise ImproperlyConfigured(f"{source}: no master keys.")
    if len({k.key_id for k in keys}) != len(keys):
        raise ImproperlyConfigured(f"{source}: master key ids must be unique.")
    return tuple(keys)


def _local_file() -> Path:
    path = Path(settings.VAR_DIR) / "master_keys"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write("# SAM master keys: the first wraps new data keys. Keep a copy apart\n"
                         "# from database backups: without it the backups are unreadable.\n")
            handle.write(new_key_line("local-1") + "\n")
    return path


@lru_cache(maxsize=1)
def master_keys() -> tuple[MasterKey, ...]:
    if os.environ.get("SAM_MASTER_KEYS"):
        return parse(os.environ["SAM_MASTER_KEYS"], source="SAM_MASTER_KEYS")
    path = os.environ.get("SAM_MASTER_KEYS_FILE")
    if path:
        return parse(Path(path).read_text(), source=path)
    local = _local_file()
    return parse(local.read_text(), source=str(local))


def primary() -> MasterKey:
    return master_keys()[0]


def by_id(key_id: str) -> MasterKey | None:
    return next((k for k in master_keys() if k.key_id == key_id), None)


def reload() -> None:
    """Forget the cached keys (after the environment or the file changed)."""
    master_keys.cache_clear()
