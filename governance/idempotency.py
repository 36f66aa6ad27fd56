"""Idempotency keys: a retried create replays its first answer instead of writing again.

The key row is inserted in the same transaction as the write it guards, so the unique
(user, key) index is the lock: a second request with the same key waits on the first's
insert, and once the first commits it finds the row and replays; if the first rolled back
it goes ahead itself. Nothing is ever left "in progress" by a crash.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from core.errors import Conflict, InvalidInput
from governance.models import IdempotencyKey

HEADER = "Idempotency-Key"
LIFETIME = timedelta(hours=24)
MAX_KEY_LENGTH = 255
# Visible ASCII, as UUIDs, ULIDs and hashes are: the same rule the OpenAPI schema publishes.
KEY_REGEX = rf"^[!-~]{{1,{MAX_KEY_LENGTH}}}$"
KEY_PATTERN = re.compile(KEY_REGEX)


class IdempotencyKeyReused(Conflict):
    code = "idempotency_key_reused"


@dataclass
class Claim:
    """Either a fresh row this request must fill (`record`), or the stored first answer."""

    row: IdempotencyKey
    replay: bool


def clean_key(raw: str | None) -> str | None:
    if raw is None:
        return None
    if not KEY_PATTERN.fullmatch(raw):
        raise InvalidInput(f"{HEADER} must be 1 to {MAX_KEY_LENGTH} visible ASCII characters "
                           "(no spaces).", fields={HEADER: ["Invalid key."]})
    return raw


def request_digest(*, endpoint: str, body: Any) -> str:
    """A keyed digest of what was asked: tells a faithful retry from a reused key, and keeps
    no readable trace of the content."""
    canonical = json.dumps({"endpoint": endpoint, "body": body}, sort_keys=True, default=str)
    return salted_hmac("sam.idempotency", canonical, algorithm="sha256").hexdigest()


def key_claim(*, user, key: str, endpoint: str, digest: str) -> Claim:
    """Claim `key` for this request, inside the caller's transaction.

    Precondition: called in a transaction.atomic block that also does the write, so the claim
    commits or rolls back with it. Raises IdempotencyKeyReused when the key was first used
    for another endpoint or body.
    """
    now = timezone.now()
    IdempotencyKey.objects.filter(user=user, key=key, created_at__lt=now - LIFETIME).delete()
    try:
        with transaction.atomic():
            # Blocks while another transaction holds an uncommitted row with this key.
            row = IdempotencyKey.objects.create(user=user, key=key, endpoint=endpoint,
                                                request_digest=digest, status_code=0, created_at=now)
        return Claim(row=row, replay=False)
    except IntegrityError:
        pass
    row = IdempotencyKey.objects.get(user=user, key=key)
    if row.endpoint != endpoint or row.request_digest != digest:
        raise IdempotencyKeyReused(
            f"This {HEADER} was already used with a different request.",
            fields={HEADER: ["Already used with a different request."]},
        )
    return Claim(row=row, replay=True)


def key_record(claim: Claim, *, status_code: int, answer: dict[str, Any]) -> None:
    """Store the answer to replay. `answer` must hold no memory text (ids, counts, reports)."""
    claim.row.status_code = status_code
    claim.row.answer = answer
    claim.row.save(update_fields=["status_code", "answer"])


def key_release(claim: Claim) -> None:
    """Nothing was written: forget the key so a retry runs again."""
    claim.row.delete()


def keys_prune(*, now=None) -> int:
    """Delete answers older than LIFETIME; returns how many."""
    cutoff = (now or timezone.now()) - LIFETIME
    deleted, _ = IdempotencyKey.objects.filter(created_at__lt=cutoff).delete()
    return deleted
