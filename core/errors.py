"""Domain errors that services raise and the API maps to HTTP answers.

Services know nothing of HTTP; they raise these, and the exception handler turns each
into the one stable error shape {"error": {"code", "message", "fields"}}.
"""

from __future__ import annotations

from typing import Any


class DomainError(Exception):
    """Base of errors a client can act on."""

    status_code = 400
    code = "invalid"

    def __init__(self, message: str, *, fields: dict[str, list[str]] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fields = fields or {}
        self.extra = extra or {}


class InvalidInput(DomainError):
    status_code = 400
    code = "invalid"


class NotFound(DomainError):
    status_code = 404
    code = "not_found"


class Forbidden(DomainError):
    status_code = 403
    code = "forbidden"


class VersionConflict(DomainError):
    """An edit named a version that is no longer the current one."""

    status_code = 409
    code = "version_conflict"

    def __init__(self, *, expected: int, current: int) -> None:
        super().__init__(
            f"This memory is at version {current}; the edit was based on version {expected}. "
            "Fetch the current version, reapply the change and send it again.",
            extra={"current_version": current},
        )
        self.current = current


class Conflict(DomainError):
    """The request clashes with what is stored (an id that already exists...)."""

    status_code = 409
    code = "conflict"


class ModeRefusesWrites(Conflict):
    """The space's or the user's memory mode (paused, off) forbids writing now."""

    code = "mode_refuses_writes"


class TooManyAttempts(DomainError):
    """The caller has been refused too often in a short time; it may try again later."""

    status_code = 429
    code = "too_many_attempts"


# --- errors of field encryption (governance.crypto raises them) ---------------------------
# Not DomainErrors: a client cannot act on them. They are loud on purpose: a wrong or
# missing key must stop the request, never hand back garbage.

class CryptoError(Exception):
    pass


class KeyMissing(CryptoError):
    """A master key needed to unwrap a data key is not configured, or is the wrong key."""


class KeyDestroyed(CryptoError):
    """The data key was destroyed (crypto-shredded); what it sealed is gone for good."""


class Tampered(CryptoError):
    """A sealed value failed authentication: it was altered or moved to another column."""
