"""Normalisation of storage-bound text, and deterministic suggestions (README.md, "The memory entry")."""

import pytest

from memories import enrichment, entry
from memories.normalize import clean_content, clean_line, clean_phrases, clean_tags


def test_canonical_phrase_is_trimmed_single_spaced_and_lowercased():
    # Phrases are trimmed, single-spaced and lowercased: "  Prefer   MudDialog  " -> "prefer muddialog".
    assert clean_phrases(["  Prefer   MudDialog  "]) == ["prefer muddialog"]


def test_title_keeps_its_casing_but_loses_extra_space():
    assert clean_line("  MudSnackbar   preferred\tfor Alerts \n") == "MudSnackbar preferred for Alerts"


def test_repeated_phrases_and_tags_are_dropped_after_normalising():
    assert clean_phrases(["Use X", "use  x", " ", "Avoid Y"]) == ["use x", "avoid y"]
    assert clean_tags(["Feature Flags", "feature-flags", "UI"]) == ["feature-flags", "ui"]


def test_content_keeps_lines_and_indentation_but_folds_inner_space():
    raw = "  Run this:\r\n\r\n\r\n\r\n    def f():   return  1   \n\tdone  "
    assert clean_content(raw) == "Run this:\n\n    def f(): return 1\n    done"


def test_normalise_only_touches_fields_present():
    out = entry.normalise({"title": "  A  title "})
    assert out == {"title": "A title"}


def test_missing_summary_phrases_and_tags_are_suggested_deterministically():
    content = (
        "Use MudSnackbar instead of MudDialog for alert-style notifications in Blazor UI. "
        "Keep alerts short and avoid modal dialogs for quick notifications."
    )
    state = {"title": "MudSnackbar preferred for alerts", "content": content, "summary": "",
             "canonical_phrases": [], "tags": []}
    known = {"mudsnackbar", "blazor", "unused"}
    filled = entry.fill_suggestions(state, explicit={"title", "content"},
                                    known_tags=lambda words: known & set(words))

    assert filled == ["summary", "canonical_phrases", "tags"]
    assert state["summary"].startswith("Use MudSnackbar instead of MudDialog")
    assert state["canonical_phrases"][0] == "mudsnackbar preferred for alerts"
    assert all(p == p.lower() for p in state["canonical_phrases"])
    # Only tags the space already uses, strongest first; never a content word that is not one.
    assert state["tags"] == ["mudsnackbar", "blazor"]
    again = {"title": state["title"], "content": content, "summary": "", "canonical_phrases": [],
             "tags": []}
    entry.fill_suggestions(again, explicit={"title", "content"},
                           known_tags=lambda words: known & set(words))
    assert again == state


@pytest.mark.parametrize(("title", "content", "phrases"), [
    # A name alone, or a word and stop words, is in any question about that person: never a
    # phrase; without a real one, title and text together stand in.
    ("Nate", "Nate: No problem, Nate!", ["nate nate: no problem, nate!"]),
    ("Gina", "Gina: ;)", ["gina gina: ;)"]),
    ("Meeting notes", "Notes from Caroline Smith, about the quarterly roadmap.",
     ["meeting notes", "quarterly roadmap"]),
    ("Use PgBouncer in transaction mode",
     "Connection pooling: use PgBouncer in transaction pooling mode for the API workers.",
     ["use pgbouncer in transaction mode", "transaction pooling mode", "connection pooling", "api workers"]),
])
def test_suggested_phrases_are_real_phrases_not_names(title, content, phrases):
    assert enrichment.suggest_phrases(title=title, content=content) == phrases


def test_explicit_empty_tag_list_is_kept():
    state = {"title": "Some title", "content": "Some content that is long enough.",
             "summary": "", "canonical_phrases": [], "tags": []}
    entry.fill_suggestions(state, explicit={"title", "content", "tags"})
    assert state["tags"] == []


def test_long_first_sentence_is_cut_to_the_summary_limit():
    content = "word " * 200
    summary = enrichment.suggest_summary(content)
    assert 10 <= len(summary) <= 320
    assert summary.endswith("…")


def test_validation_reports_each_limit_by_field_path():
    state = {**entry.DEFAULTS, "title": "ab", "content": "short", "summary": "x",
             "canonical_phrases": ["ok phrase", "no"], "tags": ["a"],
             "context_window": {"applies_to": [], "excludes": []},
             "decay_policy": {"type": "linear", "half_life_days": 3, "min_confidence": 2},
             "kind": "not-a-kind"}
    errors = entry.validate(state)
    assert set(errors) == {
        "title", "content", "summary", "canonical_phrases[1]", "tags[0]", "kind",
        "decay_policy.type", "decay_policy.half_life_days", "decay_policy.min_confidence",
    }
