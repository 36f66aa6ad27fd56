"""Search over sealed text: keyed tokens instead of words.

Postgres still does the linguistics. At write time the plaintext goes to to_tsvector()
as a query parameter (it is never stored); each resulting lexeme is replaced by an HMAC
token under the space's data key, and the tsvector of tokens, with the original
positions and weights, is what the row keeps. Queries stem the same way and look up
the tokens of every live key of every space in scope. Canonical phrases are indexed
the same way, whole, for the exact-phrase channel.

What this leaks to someone holding a dump: which rows share a word (token equality),
how often a token occurs and where in a text, and the embeddings (see docs/security.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import Q

from core.text import SEARCH_CONFIG
from governance.crypto import datakeys


class TokenQuery(SearchQuery):
    """A tsquery of quoted keyed tokens, cast as written (`'…' | '…'`::tsquery).

    Not to_tsquery(): its parser reads a hex token that starts like a number in
    scientific notation ('80e2947a…') as a number and splits it in two, so about one
    token in sixteen could never match.
    """

    template = "(%(expressions)s)::tsquery"

    def __init__(self, value: str) -> None:
        super().__init__(value, search_type="raw")


# Weighted fields of a memory: title and phrases A, tags and summary B, content C.
FIELD_WEIGHTS = (("title", "A"), ("phrases", "A"), ("tags", "B"), ("summary", "B"), ("content", "C"))


def _lexemes_of(docs: Sequence[dict[str, str]]) -> list[list[tuple[str, list[int], list[str]]]]:
    """Per document, Postgres's (lexeme, positions, weights) for its weighted fields."""
    if not docs:
        return []
    rows_sql: list[str] = []
    params: list[int | str] = []
    for index, doc in enumerate(docs):
        rows_sql.append("(%s" + ", %s" * len(FIELD_WEIGHTS) + ")")
        params += [index, *(doc.get(name, "") or "" for name, _ in FIELD_WEIGHTS)]
    vector = " || ".join(
        f"setweight(to_tsvector('{SEARCH_CONFIG}', d.f{n}), '{weight}')"
        for n, (_, weight) in enumerate(FIELD_WEIGHTS)
    )
    columns = ", ".join(f"f{n}" for n in range(len(FIELD_WEIGHTS)))
    sql = (f"SELECT d.i, t.lexeme, t.positions, t.weights FROM (VALUES {', '.join(rows_sql)}) "
           f"AS d(i, {columns}), unnest({vector}) AS t ORDER BY d.i, t.lexeme")
    result: list[list[tuple[str, list[int], list[str]]]] = [[] for _ in docs]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        for index, lexeme, positions, weights in cursor.fetchall():
            result[index].append((lexeme, list(positions or []), list(weights or [])))
    return result


def _quote(token: str) -> str:
    return "'" + token + "'"


def token_vectors(data_key_id: int, docs: Sequence[dict[str, str]]) -> list[str]:
    """tsvector literals of keyed tokens for `docs` (title, phrases, tags, summary, content)."""
    vectors = []
    for lexemes in _lexemes_of(docs):
        entries = []
        for lexeme, positions, weights in lexemes:
            token = datakeys.token(data_key_id, lexeme)
            if positions:
                marks = ",".join(f"{p}{w}" for p, w in zip(positions, weights, strict=True))
                entries.append(f"{_quote(token)}:{marks}")
            else:
                entries.append(_quote(token))
        vectors.append(" ".join(entries))
    return vectors


def phrase_tokens(data_key_id: int, phrases: Iterable[str]) -> list[str]:
    """Keyed tokens of whole canonical phrases (already normalised to lower case)."""
    return sorted({datakeys.token(data_key_id, "phrase|" + phrase) for phrase in phrases})


def query_tokens(space_ids: Iterable[int], words: Iterable[str], *, phrase: bool = False) -> dict[str, str]:
    """token -> word, for every live key of every space: what a query looks up."""
    tokens: dict[str, str] = {}
    for space_tokens in query_tokens_by_space(space_ids, words, phrase=phrase).values():
        tokens.update(space_tokens)
    return tokens


def query_tokens_by_space(space_ids: Iterable[int], words: Iterable[str], *,
                          phrase: bool = False) -> dict[int, dict[str, str]]:
    """space id -> (token -> word) under that space's live keys.

    A space's rows hold only its own keys' tokens, so a search that looks in each space
    for that space's tokens finds what a search for every token everywhere finds, and
    tests each row against a few tokens rather than all the spaces' (see retrieval.channels).
    """
    prefix = "phrase|" if phrase else ""
    word_list = list(dict.fromkeys(words))
    by_space: dict[int, dict[str, str]] = {}
    for space_id, key_ids in datakeys.live_key_ids_many(space_ids).items():
        tokens = by_space.setdefault(space_id, {})
        for key_id in key_ids:
            for word in word_list:
                tokens[datakeys.token(key_id, prefix + word)] = word
    return by_space


def index_entries(rows: Sequence[tuple[str, int, dict[str, Any]]]) -> list[tuple[str, str, list[str]]]:
    """The search index of documents: (id, data key id, doc) in, (id, token tsvector literal,
    phrase tokens) out. The caller stores them (memories.search_index)."""
    by_key: dict[int, list[tuple[str, dict[str, Any]]]] = {}
    for row_id, key_id, doc in rows:
        by_key.setdefault(key_id, []).append((row_id, doc))
    entries = []
    for key_id, items in by_key.items():
        vectors = token_vectors(key_id, [_doc_text(doc) for _, doc in items])
        for (row_id, doc), vector in zip(items, vectors, strict=True):
            entries.append((row_id, vector, phrase_tokens(key_id, doc.get("canonical_phrases") or [])))
    return entries


def _doc_text(doc: dict[str, Any]) -> dict[str, str]:
    return {
        "title": doc.get("title") or "",
        "phrases": " ".join(doc.get("canonical_phrases") or []),
        "tags": " ".join(doc.get("tags") or []),
        "summary": doc.get("summary") or "",
        "content": doc.get("content") or "",
    }


_LEXEME = re.compile(r"'((?:[^']|'')*)'")


def websearch_tsquery(space_ids: Iterable[int], text: str) -> str | None:
    """A tsquery over keyed tokens for web-search syntax (quotes, OR, -word), or None.

    Postgres parses and stems `text`; each lexeme of the parsed query is then replaced by
    the OR of its tokens under every live key of the spaces searched.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT websearch_to_tsquery(%s::regconfig, %s)::text", [SEARCH_CONFIG, text])
        parsed = cursor.fetchone()[0]
    if not parsed:
        return None
    spaces = list(space_ids)

    def tokens_of(match: re.Match) -> str:
        word = match.group(1).replace("''", "'")
        tokens = sorted(query_tokens(spaces, [word]))
        # A word no live key has a token for matches nothing ('-' is never a token).
        return "(" + " | ".join(_quote(t) for t in tokens) + ")" if tokens else "'-'"

    return _LEXEME.sub(tokens_of, parsed)


def text_match(space_ids: Iterable[int], text: str, *, field: str = "search_vector") -> Q:
    """The filter of a list's free-text search over sealed rows: the id itself, or the
    keyed tokens of `text` (web-search syntax) in `field`, under the keys of those spaces.

    The index holds keyed tokens, never words, so a word no key has a token for matches
    nothing.
    """
    match = Q(pk=text.strip())
    tokens = websearch_tsquery(space_ids, text)
    if tokens:
        match |= Q(**{field: TokenQuery(tokens)})
    return match
