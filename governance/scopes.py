"""What an API token may do by kind of request: its scopes.

A token's spaces and role say where and how much; its scopes say whether it may change
anything at all:

- `read`: the safe methods (GET, HEAD, OPTIONS) and the few POSTs that only read: recall,
  context packs and prompt augmentation (APIViews that say `reads_only = True`, which
  also lets their reads go to a read replica, core/replica.py), recalling thinking chains
  and saying an answer used a memory (ViewSet actions marked `@reads_only_action`).
- `write`: every other request (creating, editing, deleting, importing, issuing and
  revoking tokens).

Every token holds `read`; `write` is the default and can be left out, for an agent that
should only look. Scopes are enforced in one place, as a token authenticates
(governance.authentication), so the REST API and MCP (whose tools call the REST API
in-process) are held to them alike, whatever permission classes a view declares.
Signed-in people (a session, not a token) have no scopes: their role decides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django.db import models

from core.errors import InvalidInput

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
READS_ONLY_ATTRIBUTE = "sam_reads_only"

F = TypeVar("F", bound=Callable[..., Any])


class Scope(models.TextChoices):
    READ = "read", "Read: look and recall"
    WRITE = "write", "Write: also add, change and delete"


ALL_SCOPES: tuple[str, ...] = (Scope.READ.value, Scope.WRITE.value)
DEFAULT_SCOPES: list[str] = list(ALL_SCOPES)


def default_scopes() -> list[str]:
    """The scopes of a token issued without any named (a callable, for the model default)."""
    return list(DEFAULT_SCOPES)


def reads_only_action(handler: F) -> F:
    """Mark a ViewSet action whose unsafe method only reads, so a read-only token may call
    it (an APIView whose every method only reads says `reads_only = True` instead). Apply
    it next to the `def`."""
    setattr(handler, READS_ONLY_ATTRIBUTE, True)
    return handler


def needed(method: str, view: Any) -> str:
    """The scope a request by `method` to `view` (a DRF view instance) needs."""
    if method.upper() in SAFE_METHODS or getattr(view, "reads_only", False):
        return Scope.READ
    # A ViewSet knows its action by now (set as the request was initialised); an APIView's
    # handler is the method named like the HTTP method.
    name = getattr(view, "action", None) or method.lower()
    handler = getattr(view, name, None)
    if handler is not None and getattr(handler, READS_ONLY_ATTRIBUTE, False):
        return Scope.READ
    return Scope.WRITE


def refusal(scopes: Iterable[str], method: str, view: Any) -> str | None:
    """Why a token holding `scopes` may not make this request (None when it may)."""
    scope = needed(method, view)
    if scope in scopes:
        return None
    return (f"This token's scopes ({', '.join(sorted(scopes)) or 'none'}) do not include "
            f"'{scope}', which this request needs. Issue a token with the '{scope}' scope.")


def clean(scopes: Iterable[str] | None) -> list[str]:
    """Scopes as stored: known names, `read` always among them, in a fixed order.
    None means the default (read and write). Raises InvalidInput otherwise."""
    if scopes is None:
        return default_scopes()
    given = set(scopes)
    unknown = sorted(given - set(ALL_SCOPES))
    if unknown:
        raise InvalidInput("Unknown scope.", fields={"scopes": [
            f"Unknown scope {', '.join(repr(s) for s in unknown)}; the scopes are {', '.join(ALL_SCOPES)}."]})
    if Scope.READ not in given:
        raise InvalidInput("Every token reads.", fields={"scopes": [
            "Include 'read': every token may read; 'write' adds changes."]})
    return [scope for scope in ALL_SCOPES if scope in given]
