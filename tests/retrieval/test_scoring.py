"""Scoring arithmetic, thresholds and their exceptions, rationales and conflicts (pure)."""

from datetime import UTC, datetime, timedelta

import pytest

from retrieval import explain, scoring
from retrieval.scoring import Signals, Thresholds

DOCUMENTED_WEIGHTS = scoring.PROFILES["seed000"].weights


def test_documented_composite_example_is_0_6475():
    signals = Signals(semantic=0.82, exact=0.10, recency=0.60, confidence=0.85)
    assert scoring.composite(signals, DOCUMENTED_WEIGHTS) == pytest.approx(0.6475, abs=1e-12)


def test_the_0_6475_candidate_narrowly_fails_the_default_minimum():
    signals = Signals(semantic=0.82, exact=0.10, recency=0.60, confidence=0.85)
    score = scoring.composite(signals, DOCUMENTED_WEIGHTS)
    assert not scoring.passes(signals, score, Thresholds())


@pytest.mark.parametrize(("signals", "expected"), [
    (Signals(semantic=0.80, exact=0.60, recency=0.0, confidence=0.5), True),   # exact exception
    (Signals(semantic=0.80, exact=0.0, recency=0.0, confidence=0.90), True),   # confidence exception
    (Signals(semantic=0.78, exact=0.59, recency=0.0, confidence=0.89), False),
    (Signals(semantic=0.70, exact=0.0, recency=0.9, confidence=1.0), False),   # below similarity
    (Signals(semantic=0.10, exact=0.60, recency=0.0, confidence=0.2), True),   # exact makes it relevant
])
def test_exceptions_to_the_composite_minimum(signals, expected):
    score = scoring.composite(signals, DOCUMENTED_WEIGHTS)
    assert score < 0.65
    assert scoring.passes(signals, score, Thresholds()) is expected


def test_request_overrides_replace_weights_and_thresholds():
    profile = scoring.resolve_profile("seed000", weights={"semantic": 1.0},
                                      thresholds={"composite_min": 0.1})
    assert profile.weights == {"semantic": 1.0}
    assert profile.thresholds.composite_min == 0.1
    assert profile.thresholds.similarity == 0.75
    with pytest.raises(KeyError):
        scoring.resolve_profile("nope")


def test_recency_and_decay_follow_their_formulas():
    assert scoring.recency_signal(0, 30) == 1.0
    assert scoring.recency_signal(30, 30) == pytest.approx(0.3679, abs=1e-4)
    assert scoring.recency_signal(None, 30) == 0.0
    now = datetime(2026, 6, 1, tzinfo=UTC)
    row = {"confidence": 0.8, "updated_at": now - timedelta(days=90), "decayed_at": None,
           "memory_type": "semantic", "decay_policy": {"type": "exponential", "half_life_days": 90},
           "importance": 0.0, "usage_count": 0, "reliability": "unverified", "priority": "normal",
           "last_accessed_at": None}
    # Semantic (0.995 a day) and a 90-day half-life, both over 90 days: 0.8 x 0.5 x 0.995^90.
    assert scoring.effective_confidence(row, now=now) == pytest.approx(0.8 * 0.5 * 0.995 ** 90)
    # From the last decay pass, not the last update; `none` never decays.
    assert scoring.effective_confidence({**row, "decayed_at": now}, now=now) == 0.8
    assert scoring.effective_confidence({**row, "decay_policy": {"type": "none"}}, now=now) == 0.8


def test_exact_signal_counts_phrase_hits():
    assert scoring.exact_signal(0, 3) == 0.0
    assert scoring.exact_signal(1, 1) == 1.0
    assert scoring.exact_signal(1, 3) == 0.5
    assert scoring.exact_signal(2, 5) == 1.0


def test_rationale_names_the_two_strongest_signals_and_a_cue():
    signals = Signals(semantic=0.3, exact=0.8, recency=0.1, confidence=0.85)
    sentence = explain.rationale(signals, DOCUMENTED_WEIGHTS, cue="the current MudBlazor UI task",
                                 conflict=False)
    assert sentence == ("Recalled for an exact phrase hit (0.80) and semantic match (0.30), "
                        "relevant to the current MudBlazor UI task.")


def test_conflicting_preferences_sharing_a_tag_are_found():
    items = [
        ("mem_a", ["ui", "blazor"], ["use mudsnackbar for alerts", "avoid muddialog for alert pop-ups"]),
        ("mem_b", ["ui"], ["prefer muddialog"]),
        ("mem_c", ["backend"], ["prefer muddialog"]),  # no shared tag with mem_a
    ]
    conflicts = explain.find_conflicts(items)
    assert [(c.a, c.b, c.shared_tags, c.subject) for c in conflicts] == [
        ("mem_a", "mem_b", ("ui",), ("muddialog",))]


def test_prefill_drafts_a_memory_from_the_conversation_and_task():
    prefill = explain.new_memory_prefill(
        conversation=[{"speaker": "user", "content": "We always deploy on Tuesdays after the freeze."},
                      {"speaker": "assistant", "content": "Noted."}],
        active_task="Document the deploy schedule", query="")
    assert prefill["title"] == "Document the deploy schedule"
    assert "deploy on Tuesdays" in prefill["content"]
    assert prefill["tags"]
    assert prefill["canonical_phrases"]
    assert all(p == p.lower() for p in prefill["canonical_phrases"])


@pytest.mark.parametrize(("lexemes", "enough", "expected"), [
    (0, 6, 0.0), (3, 6, 0.5), (5, 6, 5 / 6), (6, 6, 1.0), (40, 6, 1.0), (2, 0, 1.0),
])
def test_substance_counts_a_near_empty_memory_in_proportion(lexemes, enough, expected):
    assert scoring.substance(lexemes, enough) == pytest.approx(expected)
