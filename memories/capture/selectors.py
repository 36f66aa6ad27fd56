"""Reads of chat imports, as the caller may see them."""

from __future__ import annotations

from core.actor import Actor
from core.errors import NotFound
from governance import access
from memories.models import ChatImport


def chat_import_get(*, actor: Actor, import_id: str) -> ChatImport:
    """An import, for who uploaded it or the space's owners, while they still read its space;
    to anyone else it does not exist (NotFound)."""
    # Through the gateway: only imports of spaces the caller still reads, then only their own
    # (or any, for the space's owners).
    visible = access.restrict(ChatImport.objects.select_related("space"), actor)
    chat_import = visible.filter(pk=import_id).first()
    mine = chat_import is not None and chat_import.created_by_id == getattr(actor, "pk", None)
    if chat_import is None or not (mine or access.can(actor, "manage", chat_import.space)):
        raise NotFound(f"No chat import '{import_id}'.")
    return chat_import
