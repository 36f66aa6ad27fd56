"""Text conventions every app shares: pure, no database, no app imports.

SEARCH_CONFIG is the one Postgres text-search configuration SAM stems with: the keyed tokens
written for a memory (governance.crypto.search), the lexemes recall looks up
(retrieval.channels) and those of reasoning chains (prd) must all come from the same one,
or a word written one way would never be found the other.

The capitalised-word patterns are what redaction (governance.redaction), entities
(memories.entities.mentions), capture (memories.capture) and enrichment build their name
patterns from, so each reading of "a capitalised word" is written, and kept bounded, once.
"""

from __future__ import annotations

# Postgres's text-search configuration (a regconfig name) for every to_tsvector and tsquery.
SEARCH_CONFIG = "english"


# --- capitalised words ----------------------------------------------------------------
# What a capitalised word is depends on who reads it, so there are three readings, each
# defined here once. Every repeated part starts with a character the part before it cannot
# take (or is bounded), so no text makes the regex engine backtrack: a crafted text once
# took minutes on a pattern that allowed two ways to split one word.

# A capital, then lower-case Latin-1 letters ("Amara", "José"): a word of a person's name as
# people type it, for capture's facts about the user and enrichment's proper nouns.
CAPITALISED_WORD = r"[A-Z][a-zà-ÿ]+"

# A name as texts write one, every part bounded: a capital and lower-case letters, up to four
# inner capitals and three hyphenated or apostrophe parts ("PostgreSQL", "MudDialog",
# "O'Neill", "Smith-Jones"), for the entities a memory names.
PROPER_NAME_WORD = r"[A-Z][a-z]{1,30}(?:[A-Z][a-z0-9]{0,30}){0,4}(?:[-'][A-Z]?[a-z]{1,30}){0,3}"
# Up to three such words on one line ("Tea\nYara: …" is two names), the middle one possibly an
# acronym: "Hacker News", "New York City", "Amara Okafor".
PROPER_NAME = rf"{PROPER_NAME_WORD}(?: (?:{PROPER_NAME_WORD}|[A-Z]{{2,}}))?(?: {PROPER_NAME_WORD})?"


def capitalised_word_of(capitals: str) -> str:
    """A word of letters in any script that starts with one of `capitals` (the body of a
    character class), its parts possibly joined by hyphens or apostrophes ("Saint-Honoré",
    "O'Connell"): for redaction, which reads names and places in many languages, each
    recognizer with the capitals it knows."""
    return rf"[{capitals}][^\W\d_]*(?:['’-][^\W\d_]+)*"


# --- a title with its gist --------------------------------------------------------------
def _comparable(text: str) -> str:
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def title_with_gist(title: str, gist: str) -> str:
    """"Title: gist" for a one-line listing, without saying anything twice.

    A summary suggested from a memory's text often starts with its title ("Use UUIDv7 for
    keys" / "Use UUIDv7 for keys: sortable by time"); such a gist stands alone, and a gist
    that is only the title is left out.
    """
    title, gist = title.strip(), gist.strip()
    shown_title, shown_gist = _comparable(title), _comparable(gist)
    if not shown_gist or shown_gist == shown_title:
        return title
    if shown_title and shown_gist.startswith(shown_title + " "):
        return gist
    return f"{title}: {gist}"
