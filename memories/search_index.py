"""The keyed full-text index of memories: what a memory is searched by, and writing it.

Governance's crypto turns a document into keyed tokens (governance.crypto.search); the
memory rows are this app's to write.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connection

from governance.crypto import datakeys, search
from memories import entry
from memories.models import Memory


def search_document(memory: Memory) -> dict[str, Any]:
    """The fields a memory is searched and embedded by, as a memory state holds them."""
    return {"title": memory.title, "content": memory.content, "summary": memory.summary,
            "canonical_phrases": memory.canonical_phrases, "tags": memory.tags}


def write_index(rows: Sequence[tuple[str, int, dict[str, Any]]]) -> None:
    """Store the token tsvector and phrase tokens of memories: (id, data key id, doc)."""
    entries = search.index_entries(rows)
    if not entries:
        return
    table = connection.ops.quote_name(Memory._meta.db_table)
    # Three array parameters, whatever the number of rows: a statement with three per row
    # costs the driver more to compose than the rows cost to index. Phrase tokens are hex,
    # so a space joins one row's tokens into one array element.
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {table} AS m SET search_vector = v.sv, "
            "phrase_tokens = string_to_array(v.pt, ' ')::varchar[] "
            "FROM unnest(%s::varchar[], %s::tsvector[], %s::text[]) AS v(id, sv, pt) WHERE m.id = v.id",
            [[row_id for row_id, _, _ in entries], [vector for _, vector, _ in entries],
             [" ".join(tokens) for _, _, tokens in entries]],
        )


def reindex_resealed(memories: list[Memory]) -> None:
    """After key rotation re-sealed these memories: their keyed tokens and hashes, anew."""
    rows = []
    for memory in memories:
        doc = search_document(memory)
        rows.append((memory.id, datakeys.active_key_id(memory.space_id), doc))
        Memory._base_manager.filter(pk=memory.pk).update(
            content_hash=datakeys.keyed_digest(memory.space_id, memory.content),
            embedding_input_hash=datakeys.keyed_digest(memory.space_id, entry.embedding_text(doc)),
        )
    write_index(rows)
