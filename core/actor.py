"""Who acts: a signed-in user (through a session or an agent token) or SAM itself.

Every service takes `actor: Actor` and hands it to the gateway (governance.access), which
alone decides what it may see and do.
"""

from __future__ import annotations

from typing import TypeAlias

from django.contrib.auth.models import AnonymousUser, User


class SystemActor:
    """The actor of management commands and jobs: whoever runs them already owns the data."""

    pk = None
    is_active = True
    is_authenticated = True
    is_superuser = True

    def __str__(self) -> str:
        return "system"


SYSTEM = SystemActor()

# User: AUTH_USER_MODEL is Django's own, which is what request.user and user FKs hold.
Actor: TypeAlias = User | AnonymousUser | SystemActor
