"""Property: a context pack's whole Markdown never exceeds its token budget, whatever the
budget (tiny to large) and whatever the memories (long, short, non-Latin, conflicting)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval.packs import build_pack
from retrieval.pipeline import RankedItem, RecallResult
from retrieval.scoring import DEFAULT_PROFILE, PROFILES, Signals
from retrieval.tokens import count_tokens

AS_OF = datetime(2026, 11, 22, 12, tzinfo=UTC)
# Words, numbers, punctuation and scripts WordPiece splits differently (CJK per character,
# accents, emoji as [UNK]), so token counts are not proportional to characters.
PIECES = [*"abcdefghijklmnopqrstuvwxyz ABCXYZ0123456789.,:;-_`*#()'\"\n", "é", "ß", "数据库", "迁移",
          "🙂", "Ω", "—", " MudSnackbar ", " migrations ", " the ", "2026-11-22"]
text = st.lists(st.sampled_from(PIECES), max_size=400).map("".join)


@st.composite
def ranked_items(draw) -> list[RankedItem]:
    count = draw(st.integers(min_value=0, max_value=14))
    items = []
    for n in range(count):
        memory_id = f"m{n:03d}"
        row = {
            "id": memory_id, "title": draw(text.filter(lambda t: t.strip()).map(lambda t: t[:120])),
            "content": draw(text), "summary": draw(text.map(lambda t: t[:300])),
            "kind": draw(st.sampled_from(["fact", "rule", "preference"])),
            "memory_type": draw(st.sampled_from(["semantic", "episodic", "procedural"])),
            "priority": draw(st.sampled_from(["core", "high", "normal", "low"])),
            "space_slug": draw(st.sampled_from(["webshop", "platform-team", "user-maya"])),
            "version": draw(st.integers(min_value=1, max_value=120)),
            "source_type": "user", "source_ref": draw(st.sampled_from(["", "ticket 42", "PR #1181"])),
            "source_uri": draw(st.sampled_from(["", "https://example.invalid/wiki/page"])),
            "updated_at": AS_OF - timedelta(days=draw(st.integers(min_value=0, max_value=900))),
        }
        conflict = None
        if n and draw(st.booleans()):
            conflict = {"with": f"m{n - 1:03d}", "subject": ["retries"], "shared_tags": ["ops"]}
        items.append(RankedItem(row=row, signals=Signals(semantic=0.5), score=1.0 - n / 20,
                                rationale=draw(text.map(lambda t: t[:200])), conflict=conflict))
    return items


def recall_result(items: list[RankedItem], query: str) -> RecallResult:
    follow_ups = [
        {"type": "clarify_conflict", "label": "These memories disagree about retries: which one holds?",
         "payload": {"memory_ids": sorted([i.id, i.conflict["with"]]), "shared_tags": ["ops"],
                     "subject": ["retries"]}}
        for i in items if i.conflict
    ]
    return RecallResult(query_text=query, profile=PROFILES[DEFAULT_PROFILE], items=items,
                        follow_ups=follow_ups, fail_safe=not items, timings_ms={},
                        spaces=["webshop"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=ranked_items(), query=text.map(lambda t: t[:400]),
       budget=st.one_of(st.integers(min_value=1, max_value=60), st.integers(min_value=61, max_value=6000)),
       pack_type=st.sampled_from(["task", "boot"]), as_of=st.sampled_from([AS_OF, None]))
def test_a_pack_never_exceeds_its_budget(items, query, budget, pack_type, as_of):
    pack = build_pack(recall_result(items, query), pack_type=pack_type, token_budget=budget, as_of=as_of)

    counted = count_tokens(pack.markdown)
    assert counted <= budget
    # The budget line states the count of the text it is in (an upper bound at worst).
    used = pack.json["token_budget"]["used"]
    assert counted <= used <= budget
    if " tokens · " in pack.markdown:  # budgets too small for it leave the budget line out
        assert f" · {used}/{budget} tokens · " in pack.markdown
    # Both renderings show the same selection, and what was trimmed is accounted for.
    for item in pack.json["items"]:
        assert f"`{item['id']}`" in pack.markdown
    assert pack.json["token_budget"]["trimmed"] == len(items) - len(pack.json["items"])


@settings(max_examples=40, deadline=None)
@given(items=ranked_items(), query=text.map(lambda t: t[:200]))
def test_a_budget_large_enough_keeps_every_memory(items, query):
    """The bound is not met by dropping what would fit: with room for all, all are kept."""
    pack = build_pack(recall_result(items, query), pack_type="task", token_budget=200000, as_of=AS_OF)

    assert [i["id"] for i in sorted(pack.json["items"], key=lambda i: i["rank"])] == [i.id for i in items]
    assert pack.json["token_budget"]["trimmed"] == 0
