"""Keyed tokens are matched exactly as written, whatever characters they start with."""

from __future__ import annotations

from django.db import connection

from governance.crypto.search import TokenQuery
from memories.models import Memory
from retrieval import channels
from tests.factories import make_memory

# A hex token that to_tsquery's parser would read as a number in scientific notation
# (80e2947) followed by a word, and split in two.
NUMBER_LIKE = "80e2947abcdef0123456789abcdef01"


def _index_as(memory: Memory, token: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET search_vector = %s::tsvector WHERE id = %s",
                       [f"'{token}':1A", memory.pk])


def test_a_number_like_token_is_found_by_the_list_search(space):
    memory = make_memory(space)
    _index_as(memory, NUMBER_LIKE)
    found = Memory.objects.filter(search_vector=TokenQuery(f"'{NUMBER_LIKE}' | 'other'"))
    assert list(found.values_list("pk", flat=True)) == [memory.pk]


def test_a_number_like_token_is_found_by_the_lexical_channel(space):
    memory = make_memory(space)
    _index_as(memory, NUMBER_LIKE)
    plan = channels.LexicalPlan(all_lexemes=["word"], chosen=["word"], tokens={NUMBER_LIKE: "word"})
    scope = channels.Scope(space_ids=(space.pk,))
    assert channels.lexical_candidates(scope, plan, 10) == [memory.pk]
