"""Token issue and revocation."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from governance.models import ApiToken, generate_token, hash_token


@transaction.atomic
def api_token_issue(*, user: AbstractBaseUser, name: str,
                    expires_at: datetime | None = None) -> tuple[ApiToken, str]:
    """Create a token for `user`. Returns the row and the plaintext, which is not stored."""
    raw = generate_token()
    token = ApiToken.objects.create(
        user=user, name=name, prefix=raw[:10], key_hash=hash_token(raw), expires_at=expires_at
    )
    return token, raw


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token
