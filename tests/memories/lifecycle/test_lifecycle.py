"""The memory lifecycle: decay (pure and the SQL pass), archive suggestions, pruning,
feedback, the review queue, and the maintenance command and schedules."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_q.models import Schedule
from hypothesis import given, settings
from hypothesis import strategies as st

from governance.audit.models import AuditEvent
from memories.lifecycle import decay, maintenance
from memories.models import Memory, MemoryStats, MemoryVersion, ReviewItem
from tests.factories import make_memory
from tests.personas import member_client

DAY = timedelta(days=1)

inputs = st.builds(
    decay.DecayInputs,
    memory_type=st.sampled_from(["episodic", "semantic", "procedural", "other"]),
    decay_policy=st.one_of(
        st.none(),
        st.just({"type": "none"}),
        st.fixed_dictionaries({"type": st.just("exponential"), "half_life_days": st.integers(7, 3650)}),
    ),
    importance=st.floats(0, 1),
    usage_count=st.integers(0, 10_000),
    accessed_recently=st.booleans(),
    reliability=st.sampled_from(["unverified", "inferred", "confirmed", "contested"]),
    priority=st.sampled_from(["low", "normal", "high", "core"]),
)
confidences = st.floats(0, 1)
days = st.floats(0, 5000)


# --- the rule (pure) ------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(confidence=confidences, elapsed=days, memory=inputs)
def test_confidence_never_rises_without_reinforcement(confidence, elapsed, memory):
    assert 0 <= decay.decayed(confidence, elapsed, memory) <= confidence


@settings(max_examples=300, deadline=None)
@given(confidence=confidences, first=days, second=days, memory=inputs)
def test_decaying_twice_is_decaying_once_for_the_whole_time(confidence, first, second, memory):
    stepwise = decay.decayed(decay.decayed(confidence, first, memory), second, memory)

    assert stepwise == pytest.approx(decay.decayed(confidence, first + second, memory), rel=1e-9, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(confidence=confidences, elapsed=days, memory=inputs)
def test_pinned_and_no_decay_policies_keep_their_confidence_and_confirmation_slows_it(
    confidence, elapsed, memory
):
    from dataclasses import replace

    assert decay.decayed(confidence, elapsed, replace(memory, priority="core")) == confidence
    assert decay.decayed(confidence, elapsed, replace(memory, decay_policy={"type": "none"})) == confidence
    confirmed = decay.decayed(confidence, elapsed, replace(memory, reliability="confirmed"))
    assert confirmed >= decay.decayed(confidence, elapsed, replace(memory, reliability="unverified"))
    used = decay.decayed(confidence, elapsed, replace(memory, usage_count=memory.usage_count + 5))
    assert used >= decay.decayed(confidence, elapsed, memory)


def test_the_type_rates_are_seed_001s_times_the_policy():
    plain = {"importance": 0.0, "decay_policy": {"type": "none"}}
    policy = {"type": "exponential", "half_life_days": 90}
    for memory_type, rate in decay.TYPE_DAILY_RATE.items():
        memory = decay.DecayInputs(memory_type=memory_type, decay_policy=policy, importance=0.0)
        assert decay.decayed(1.0, 1, memory) == pytest.approx(rate * 0.5 ** (1 / 90))
        assert decay.decayed(1.0, 30, decay.DecayInputs(memory_type=memory_type, **plain)) == 1.0
    # Importance 1 halves the daily loss.
    important = decay.DecayInputs(memory_type="episodic", decay_policy=policy, importance=1.0)
    assert 1 - decay.decayed(1.0, 1, important) == pytest.approx((1 - 0.98 * 0.5 ** (1 / 90)) / 2)


# --- the nightly pass -----------------------------------------------------------------


@pytest.fixture
def aged(space) -> list[Memory]:
    """Memories of every kind of decay, last decayed at different times in the past."""
    now = timezone.now()
    specs = [
        {"memory_type": "episodic"},
        {"memory_type": "semantic", "importance": 0.9},
        {"memory_type": "procedural", "reliability": "confirmed"},
        {"priority": "core"},
        {"decay_policy": {"type": "none"}},
        {"decay_policy": {"type": "exponential", "half_life_days": 7}},
    ]
    memories = []
    for n, spec in enumerate(specs):
        memory = make_memory(
            space, title=f"Aged memory number {n}", content=f"Aged memory content number {n}.", **spec
        )
        MemoryStats.objects.filter(memory=memory).update(
            confidence=0.9,
            usage_count=n,
            decayed_at=now - (10 + 20 * n) * DAY,
            last_accessed_at=now - DAY if n % 2 else None,
        )
        memories.append(memory)
    return memories


def _expected(memory: Memory, now) -> float:
    stats = MemoryStats.objects.get(memory=memory)
    recent = stats.last_accessed_at is not None and now - stats.last_accessed_at <= 7 * DAY
    return decay.decayed(
        stats.confidence,
        (now - stats.decayed_at) / DAY,
        decay.DecayInputs(
            memory_type=memory.memory_type,
            decay_policy=memory.decay_policy,
            importance=memory.importance,
            usage_count=stats.usage_count,
            accessed_recently=recent,
            reliability=memory.reliability,
            priority=memory.priority,
        ),
    )


def test_the_sql_pass_computes_what_the_rule_says_and_leaves_memory_rows_alone(aged):
    now = timezone.now()
    expected = {m.id: _expected(m, now) for m in aged}
    before = {m.id: (m.version, m.updated_at) for m in Memory.objects.filter(pk__in=expected)}

    report = maintenance.decay_pass(now=now, batch=4)

    assert report.memories == len(aged)
    assert report.batches == 2
    stored = dict(MemoryStats.objects.filter(memory_id__in=expected).values_list("memory_id", "confidence"))
    assert stored == pytest.approx(expected, rel=1e-9)
    assert stored[aged[3].id] == 0.9  # core: pinned
    assert stored[aged[4].id] == 0.9  # policy none
    assert stored[aged[0].id] < 0.9
    assert {m.id: (m.version, m.updated_at) for m in Memory.objects.filter(pk__in=expected)} == before


def test_running_the_pass_again_or_in_two_steps_changes_nothing_more(aged):
    now = timezone.now()
    maintenance.decay_pass(now=now - 3 * DAY)
    maintenance.decay_pass(now=now)
    stepwise = dict(MemoryStats.objects.values_list("memory_id", "confidence"))
    maintenance.decay_pass(now=now)

    assert dict(MemoryStats.objects.values_list("memory_id", "confidence")) == stepwise


def test_a_dry_run_reports_the_mean_it_would_write_and_writes_nothing(aged):
    before = dict(MemoryStats.objects.values_list("memory_id", "confidence"))

    report = maintenance.decay_pass(dry_run=True)

    assert report.mean_after < report.mean_before
    assert dict(MemoryStats.objects.values_list("memory_id", "confidence")) == before


def test_recall_scores_the_confidence_the_next_pass_will_store(api, aged):
    from retrieval import scoring
    from retrieval.channels import candidate_rows

    now = timezone.now()
    row = candidate_rows([aged[0].id], vector=None, tokens={})[0]

    assert scoring.effective_confidence(row, now=now) == pytest.approx(_expected(aged[0], now), rel=1e-6)


# --- archive suggestions, the review queue, pruning ------------------------------------


def test_a_memory_below_its_minimum_is_suggested_for_archiving_once(api, space):
    low = make_memory(
        space,
        title="Old deploy window",
        content="We deployed on Fridays at noon.",
        decay_policy={"type": "exponential", "half_life_days": 30, "min_confidence": 0.5},
    )
    fine = make_memory(space, title="Fine memory", content="This one is still trusted.")
    MemoryStats.objects.filter(memory=low).update(confidence=0.45)
    MemoryStats.objects.filter(memory=fine).update(confidence=0.45)  # default minimum 0.4

    assert [f["memory"] for f in maintenance.archive_suggestions()] == [low.id]
    assert maintenance.archive_suggestions() == []
    item = ReviewItem.objects.get()
    assert item.kind == "archive_suggestion"
    assert item.evidence == {"confidence": 0.45, "min_confidence": 0.5}
    listed = api.get("/api/v1/review/?space=webshop").json()["results"]
    assert [(i["memory"], i["kind"]) for i in listed] == [(low.id, "archive_suggestion")]
    assert not Memory.objects.get(pk=low.id).archived  # a suggestion, never a silent archive


def test_a_curator_resolves_suggestions_and_others_cannot(api, space):
    memory = make_memory(space, title="Stale fact", content="The old office was on Main Street.")
    MemoryStats.objects.filter(memory=memory).update(confidence=0.2)
    maintenance.archive_suggestions()
    item = ReviewItem.objects.get()
    contributor = member_client(space, "contributor", "review-contributor")

    assert (
        contributor.post(
            f"/api/v1/review/{item.pk}/resolve/", {"action": "archive"}, format="json"
        ).status_code
        == 403
    )
    assert (
        api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "promote"}, format="json").status_code
        == 400
    )
    resolved = api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "archive"}, format="json")

    assert resolved.status_code == 200, resolved.content
    assert resolved.json()["status"] == "resolved"
    assert Memory.objects.get(pk=memory.id).archived
    again = api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "keep"}, format="json")
    assert again.status_code == 409


def test_keeping_a_suggested_memory_resets_its_confidence(api, space):
    memory = make_memory(space, title="Still true", content="Invoices are numbered per year.")
    MemoryStats.objects.filter(memory=memory).update(confidence=0.2)
    maintenance.archive_suggestions()

    api.post(f"/api/v1/review/{ReviewItem.objects.get().pk}/resolve/", {"action": "keep"}, format="json")

    assert MemoryStats.objects.get(memory=memory).confidence == 0.75
    assert not Memory.objects.get(pk=memory.id).archived


def _low(space, title: str, **fields) -> Memory:
    memory = make_memory(space, title=title, content=f"{title} content that decayed away.", **fields)
    MemoryStats.objects.filter(memory=memory).update(confidence=0.05)
    return memory


def test_pruning_needs_the_space_to_opt_in_and_spares_pinned_and_confirmed(api, space):
    doomed = _low(space, "Forgotten detail")
    pinned = _low(space, "Pinned detail", priority="core")
    confirmed = _low(space, "Confirmed detail", reliability="confirmed")

    assert maintenance.prune().pruned == []
    assert maintenance.prune().skipped_spaces["webshop"] == "policy does not opt in"
    assert api.patch("/api/v1/spaces/webshop/", {"prune_decayed": True}, format="json").status_code == 200
    dry = maintenance.prune(dry_run=True)
    assert dry.pruned == [doomed.id]
    assert Memory.objects.filter(pk=doomed.id).exists()

    assert maintenance.prune().pruned == [doomed.id]
    assert set(Memory.objects.values_list("pk", flat=True)) == {pinned.id, confirmed.id}
    assert AuditEvent.objects.filter(action="delete", target_id=doomed.id).exists()


def test_a_paused_space_is_not_pruned(api, space):
    _low(space, "Paused detail")
    api.patch("/api/v1/spaces/webshop/", {"prune_decayed": True, "mode": "paused"}, format="json")

    report = maintenance.prune()

    assert report.pruned == []
    assert report.skipped_spaces == {"webshop": "mode is paused"}


# --- feedback -------------------------------------------------------------------------


def test_confirming_adds_two_points_up_to_the_ceiling(api, space):
    memory = make_memory(space)
    MemoryStats.objects.filter(memory=memory).update(confidence=0.5, decayed_at=timezone.now())

    first = api.post(f"/api/v1/memories/{memory.id}/confirm/").json()
    MemoryStats.objects.filter(memory=memory).update(confidence=0.94, decayed_at=timezone.now())
    capped = api.post(f"/api/v1/memories/{memory.id}/confirm/").json()

    assert first["confidence"] == pytest.approx(0.52, abs=1e-4)
    assert capped["confidence"] == pytest.approx(0.95)
    assert AuditEvent.objects.filter(action="edit", target_id=memory.id).count() == 2


def test_contradicting_contests_the_memory_in_a_new_version_and_queues_it(api, space):
    memory = make_memory(space, title="Deploy day", content="We deploy on Fridays.")
    MemoryStats.objects.filter(memory=memory).update(confidence=0.7, decayed_at=timezone.now())

    body = api.post(
        f"/api/v1/memories/{memory.id}/contradict/", {"reason": "we stopped in May"}, format="json"
    ).json()

    assert body["reliability"] == "contested"
    assert body["confidence"] == pytest.approx(0.6, abs=1e-4)
    assert Memory.objects.get(pk=memory.id).version == 2
    assert MemoryVersion.objects.filter(memory=memory).count() == 2
    item = ReviewItem.objects.get(pk=body["review_item"])
    assert item.kind == "contested"
    resolved = api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "keep"}, format="json").json()
    assert resolved["resolution"] == "keep"
    assert Memory.objects.get(pk=memory.id).reliability == "confirmed"


def test_used_counts_usefulness_and_viewers_may_say_so_but_not_confirm(api, space):
    memory = make_memory(space)
    viewer = member_client(space, "viewer", "feedback-viewer")

    assert viewer.post(f"/api/v1/memories/{memory.id}/confirm/").status_code == 403
    assert viewer.post(f"/api/v1/memories/{memory.id}/used/").status_code == 200
    stats = MemoryStats.objects.get(memory=memory)
    assert stats.usage_count == 1
    assert stats.last_used_at is not None
    assert (
        member_client(space, None, "feedback-stranger")
        .post(f"/api/v1/memories/{memory.id}/used/")
        .status_code
        == 404
    )


def test_feedback_in_a_paused_space_is_refused_and_in_incognito_not_kept(api, space):
    memory = make_memory(space)
    api.patch("/api/v1/spaces/webshop/", {"mode": "paused"}, format="json")
    assert api.post(f"/api/v1/memories/{memory.id}/confirm/").status_code == 409
    api.patch("/api/v1/spaces/webshop/", {"mode": "incognito"}, format="json")
    before = MemoryStats.objects.get(memory=memory).confidence

    body = api.post(f"/api/v1/memories/{memory.id}/contradict/", {}, format="json").json()

    assert body["recorded"] is False
    assert MemoryStats.objects.get(memory=memory).confidence == before
    assert not ReviewItem.objects.exists()
    assert Memory.objects.get(pk=memory.id).reliability != "contested"


# --- jobs -----------------------------------------------------------------------------


def test_the_maintenance_command_runs_a_period_and_a_dry_run_changes_nothing(aged):
    before = dict(MemoryStats.objects.values_list("memory_id", "confidence"))
    out = io.StringIO()
    call_command("sam_maintenance", "run", "nightly", "--dry-run", stdout=out)

    report = json.loads(out.getvalue())
    assert report["dry_run"] is True
    assert report["decay"]["memories"] == len(aged)
    assert dict(MemoryStats.objects.values_list("memory_id", "confidence")) == before

    out = io.StringIO()
    call_command("sam_maintenance", "run", "nightly", stdout=out)
    assert json.loads(out.getvalue())["decay"]["memories"] == len(aged)
    assert dict(MemoryStats.objects.values_list("memory_id", "confidence")) != before
    stats = io.StringIO()
    call_command("sam_maintenance", "stats", stdout=stats)
    assert json.loads(stats.getvalue())["never_decayed"] == 0


def test_the_schedules_run_the_periods(db):
    call_command("sam_schedules", stdout=io.StringIO())

    funcs = set(Schedule.objects.values_list("func", flat=True))
    assert {
        "samsite.maintenance.nightly",
        "samsite.maintenance.weekly",
        "samsite.maintenance.monthly",
    } <= funcs
    nightly = Schedule.objects.get(func="samsite.maintenance.nightly")
    assert nightly.schedule_type == Schedule.DAILY
    assert nightly.next_run.hour == 3


# --- duplicates -----------------------------------------------------------------------


def test_exact_duplicates_merge_into_the_oldest_and_a_dry_run_only_lists_them(space):
    # Duplicates stored while the space kept them (or before writes reinforced instead).
    space.duplicate_policy = "keep"
    space.save()
    first = make_memory(space, title="Deploy window", content="We deploy on Tuesdays at ten.")
    second = make_memory(space, title="When we deploy", content="We deploy on Tuesdays at ten.")
    other = make_memory(space, title="Other", content="Invoices are numbered per year.")

    dry = maintenance.consolidate_duplicates(dry_run=True)
    assert dry.merged == {first.id: [second.id]}
    assert not Memory.objects.get(pk=second.id).archived

    report = maintenance.consolidate_duplicates()

    assert report.merged == {first.id: [second.id]}
    merged = Memory.objects.get(pk=second.id)
    assert merged.archived
    assert merged.superseded_by_id == first.id
    assert not Memory.objects.get(pk=other.id).archived
    assert maintenance.consolidate_duplicates().merged == {}


@pytest.fixture
def near_pair(space, on_commit) -> tuple[Memory, Memory]:
    # The nightly pass: the write-time check is left out here (tests/memories/lifecycle/test_write_checks.py).
    space.near_duplicate_policy = "keep"
    space.save()
    with on_commit():
        older = make_memory(space, title="Deploy day", content="We deploy on Fridays after the standup.")
    with on_commit():
        newer = make_memory(space, title="Friday deploys", content="Deploys happen Fridays, after standup.")
    # The same direction: as near as two texts get (the real model puts these two at ~0.9).
    Memory.objects.filter(pk=newer.id).update(embedding=Memory.objects.get(pk=older.id).embedding)
    return older, newer


def test_near_duplicates_are_queued_once_per_pair_and_merged_by_a_curator(api, near_pair):
    older, newer = near_pair

    report = maintenance.consolidate_duplicates()

    assert [(d["memory"], d["other"]) for d in report.near_duplicates] == [(older.id, newer.id)]
    item = ReviewItem.objects.get(kind="near_duplicate")
    assert (item.memory_id, item.other_id) == (older.id, newer.id)
    assert maintenance.consolidate_duplicates().near_duplicates == []
    listed = api.get("/api/v1/review/?kind=near_duplicate").json()["results"]
    assert [(i["memory"], i["other"]) for i in listed] == [(older.id, newer.id)]

    resolved = api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "merge"}, format="json")

    assert resolved.status_code == 200, resolved.content
    assert Memory.objects.get(pk=newer.id).archived
    assert Memory.objects.get(pk=newer.id).superseded_by_id == older.id


def test_a_pair_kept_apart_is_not_raised_again(api, near_pair):
    maintenance.consolidate_duplicates()
    item = ReviewItem.objects.get(kind="near_duplicate")
    api.post(f"/api/v1/review/{item.pk}/resolve/", {"action": "keep"}, format="json")

    assert maintenance.consolidate_duplicates(since=timezone.now() - 7 * DAY).near_duplicates == []
    assert not Memory.objects.filter(archived=True).exists()


def test_duplicates_in_a_paused_space_wait(api, space):
    space.duplicate_policy = "keep"
    space.save()
    make_memory(space, title="One", content="Same words in both.")
    make_memory(space, title="Two", content="Same words in both.")
    api.patch("/api/v1/spaces/webshop/", {"mode": "paused"}, format="json")

    report = maintenance.consolidate_duplicates()

    assert report.merged == {}
    assert report.skipped_spaces == {"webshop": "mode is paused"}
