"""Long memories are embedded window by window too, so a fact at the end of a long text is
found (memories.embeddings.passages; retrieval's passage channel)."""

import numpy as np
from django.core.cache import cache

from memories.embeddings import passages
from memories.models import MemoryPassage
from retrieval import pipeline
from retrieval.tasks import lexeme_stats_refresh
from tests.factories import make_memory

RAMBLE = ("We spent most of the weekend clearing out the garage, sorting old paint tins, broken chairs "
          "and boxes of cables nobody remembers buying, then drove two carloads to the recycling centre "
          "where the queue went round the block, and afterwards we had lunch at the little place by the "
          "canal that does the good soup, and talked about repainting the hallway before winter. ")


def test_windows_cover_a_long_text_with_overlap_and_leave_short_ones_whole():
    words = [f"w{n}" for n in range(100)]

    found = passages.windows(" ".join(words))

    assert passages.windows("a short memory of a few words") == []
    assert [w.split()[0] for w in found] == ["w0", "w36", "w72"]
    assert found[-1].split()[-1] == "w99"
    assert all(len(w.split()) <= passages.WINDOW for w in found)


def test_a_fact_at_the_end_of_a_long_memory_is_recalled(api, space, on_commit):
    cache.clear()
    fact = "Oh, and Melanie twisted her ankle at the climbing gym on Thursday, so she is on crutches."
    with on_commit():
        long = make_memory(space, title="Weekend catch-up", content=RAMBLE * 2 + fact)
        for n in range(6):
            make_memory(space, title=f"Chores {n}", content=f"Chore list {n}: " + RAMBLE[:150])
    lexeme_stats_refresh()

    answer = api.post("/api/v1/recall/", {"query": "How did Melanie get hurt?", "track": False, "k": 3,
                                          "as_of": "2026-11-22T12:00:00Z"}, format="json").json()
    top = answer["data"]["ranked_memory_list"][0]

    assert MemoryPassage.objects.filter(memory=long).count() == len(passages.windows(long.content)) >= 3
    assert top["id"] == long.id
    # The window holding the fact is closer than the vector of the whole text.
    long.refresh_from_db()
    whole = float(np.dot(long.embedding, pipeline.embed_query("How did Melanie get hurt?")))
    assert top["signals"]["semantic"] > whole + 0.1


def test_an_edit_that_shortens_a_memory_drops_its_windows(space, on_commit):
    from governance.access import SYSTEM
    from memories import services

    with on_commit():
        memory = make_memory(space, title="Weekend catch-up", content=RAMBLE * 2)
    with on_commit():
        services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                               changes={"content": "Cleared the garage."}, reason="shorter")

    assert not MemoryPassage.objects.filter(memory=memory).exists()
