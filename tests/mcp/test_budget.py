"""The token budget of MCP answers: never over, best first, whole before short."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from samsite.mcp import budget

SHORT_KEYS = ("id", "title", "summary")


def short(item: dict) -> dict:
    return {k: item[k] for k in SHORT_KEYS if k in item}


words = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)
items = st.lists(st.fixed_dictionaries({
    "id": st.text(alphabet="abcdef0123456789", min_size=4, max_size=26), "title": words, "summary": words,
    "rationale": words, "signals": st.dictionaries(st.sampled_from(["semantic", "lexical", "exact"]),
                                                   st.floats(0, 1)),
}), max_size=15)


@settings(max_examples=150, deadline=None)
@given(envelope=st.dictionaries(st.sampled_from(["query", "spaces", "hint"]), words, max_size=3),
       ranked=items, limit=st.integers(budget.MIN_BUDGET, 3000))
def test_an_answer_is_never_over_its_budget_and_keeps_the_rank_order(envelope, ranked, limit):
    answer = budget.fit(envelope, "memories", ranked, budget=limit, short=short)

    assert budget.tokens_of(answer) <= limit
    assert answer["total"] == len(ranked)
    kept = answer["memories"]
    assert bool(kept) == bool(ranked)  # never empty while anything matched
    envelope_dropped = set(answer) == {"memories", "truncated", "total"} and bool(envelope)
    squeezed = bool(kept) and kept[0] not in (ranked[0], short(ranked[0]))
    assert answer["truncated"] == (len(kept) < len(ranked) or envelope_dropped or squeezed)
    if squeezed:
        # The best item alone: its id (when it fits) and its title cut short, ending in "…".
        assert len(kept) == 1
        assert set(kept[0]) <= {"id", "title"}
        assert kept[0].get("id", ranked[0]["id"]) == ranked[0]["id"]
        title = kept[0]["title"]
        assert title == ranked[0]["title"] or (title.endswith("…")
                                               and ranked[0]["title"].startswith(title[:-1].rstrip()))
        return
    # A prefix of the ranking, each item whole or in its short form.
    for item, original in zip(kept, ranked, strict=False):
        assert item in (original, short(original))


def test_the_best_go_in_whole_then_short_then_the_list_stops():
    ranked = [{"id": f"m{n}", "title": f"Memory {n}", "summary": "short text " * 5,
               "rationale": "a long reason " * 40} for n in range(6)]
    whole = budget.tokens_of({"memories": ranked[:1], "truncated": True, "total": 6})
    answer = budget.fit({}, "memories", ranked, budget=whole + 60, short=short)

    assert answer["memories"][0] == ranked[0]
    assert answer["memories"][1] == short(ranked[1])
    assert answer["truncated"] is True
    assert answer["total"] == 6
    assert len(answer["memories"]) < 6


def test_everything_fits_in_a_large_budget():
    ranked = [{"id": "m1", "title": "One", "summary": "s"}]
    answer = budget.fit({"query": "q"}, "memories", ranked, budget=4000, short=short)
    assert answer == {"query": "q", "memories": ranked, "truncated": False, "total": 1}


def test_a_small_budget_still_gets_the_best_item_with_its_id_and_cut_title():
    ranked = [{"id": "mem_01JD5Z8K3Q4W0S6T2X9B7C1N5M", "title": "Money is stored as Decimal with two places",
               "summary": "Floats lost cents in the checkout totals " * 5} for _ in range(3)]
    answer = budget.fit({"query": "how do we store money " * 10}, "memories", ranked, budget=80, short=short)

    assert budget.tokens_of(answer) <= 80
    assert answer["memories"][0]["id"] == ranked[0]["id"]
    assert answer["memories"][0]["title"].startswith("Money")
    assert answer["truncated"] is True
    assert answer["total"] == 3


def test_a_budget_too_small_for_any_answer_is_refused():
    with pytest.raises(ValueError, match="at least"):
        budget.fit({}, "memories", [], budget=budget.MIN_BUDGET - 1, short=short)


@settings(max_examples=150, deadline=None)
@given(text=st.lists(words, max_size=40).map("\n".join), limit=st.integers(budget.MIN_BUDGET, 2000))
def test_text_is_cut_at_whole_lines_and_never_over_its_budget(text, limit):
    answer = budget.fit_text({"session_id": "ses_x"}, "markdown", text, budget=limit)

    assert budget.tokens_of(answer) <= limit
    lines = text.splitlines()
    assert answer["total"] == len(lines)
    prefixes = {"\n".join(lines[:n]) for n in range(1, len(lines))}
    if answer["truncated"] and answer["markdown"] not in prefixes:
        # Not one whole line fits: the first line with words in it, cut short.
        first = next((line for line in lines if line.strip()), "")
        assert answer["markdown"] == first or answer["markdown"].endswith("…") or answer["markdown"] == ""
        assert first.startswith(answer["markdown"][:-1].rstrip())
        assert answer["markdown"] or not first.strip()
        return
    # Whole lines from the start: all of them, or (truncated) fewer.
    shown = len(lines) if not answer["truncated"] else next(
        n for n in range(len(lines)) if answer["markdown"] == "\n".join(lines[:n]))
    assert answer["markdown"] == "\n".join(lines[:shown])
