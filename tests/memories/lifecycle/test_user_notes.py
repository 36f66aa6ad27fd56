"""A chat user's notes: idle high notes lowered to normal (relative to the space's own last
activity), and a user space capped at its note cap, on the real Postgres."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from governance.access import SYSTEM
from governance.audit.models import AuditEvent
from memories import services
from memories.lifecycle import user_notes
from memories.models import Memory, MemoryStats, MemoryVersion
from samsite import maintenance
from tests.factories import SpaceFactory, make_memory


@pytest.fixture
def dana(user):
    return SpaceFactory(slug="dana", kind="user", members={user: "owner"})


def note(space, title: str, *, days_idle: float, used_days_ago: float | None = None, **fields) -> Memory:
    """A note whose last edit was `days_idle` days ago (and last use `used_days_ago`, if any)."""
    memory = make_memory(space, title=title, **fields)
    now = timezone.now()
    Memory.objects.filter(pk=memory.pk).update(updated_at=now - timedelta(days=days_idle))
    if used_days_ago is not None:
        MemoryStats.objects.filter(memory=memory).update(last_used_at=now - timedelta(days=used_days_ago))
    return Memory.objects.get(pk=memory.pk)


def active_ids(space) -> set[str]:
    return set(Memory.objects.filter(space=space, archived=False).values_list("id", flat=True))


# --- lowering ---------------------------------------------------------------------------

def test_a_high_note_unused_for_30_days_becomes_normal_as_a_new_version_with_an_edit_audit(dana):
    """Given a user space active today, a high note idle 40 days and one used 10 days ago,
    when the nightly lowering runs, then only the idle one is normal, as version 2 whose
    changelog names the priority, with an `edit` audit row, and its last edit time kept."""
    idle = note(dana, "Uses Vim", days_idle=40, priority="high")
    used = note(dana, "Works at Acme", days_idle=40, used_days_ago=10, priority="high")
    note(dana, "Asked about Docker today", days_idle=0)

    report = user_notes.lower_idle_high()

    assert report.lowered == [idle.id]
    idle_after = Memory.objects.get(pk=idle.pk)
    assert (idle_after.priority, idle_after.version) == ("normal", 2)
    assert idle_after.updated_at == idle.updated_at
    version = MemoryVersion.objects.get(memory=idle, version=2)
    assert [(c["path"], c["before"], c["after"]) for c in version.changes] == [("priority", "high", "normal")]
    assert version.snapshot["priority"] == "normal"
    assert AuditEvent.objects.filter(action="edit", target_id=idle.id).count() == 1
    assert Memory.objects.get(pk=used.pk).priority == "high"


def test_a_dormant_space_keeps_its_high_notes_idle_is_counted_from_its_last_activity(user):
    """Given a user who last did anything 100 days ago, a high note idle 110 days (10 before
    the space's last activity) stays high; one idle 140 days (40 before) is lowered."""
    space = SpaceFactory(slug="away", kind="user", members={user: "owner"})
    close = note(space, "Prefers tea", days_idle=110, priority="high")
    far = note(space, "Lived in Oslo", days_idle=140, priority="high")
    note(space, "Last conversation", days_idle=100)

    report = user_notes.lower_idle_high()

    assert report.lowered == [far.id]
    assert Memory.objects.get(pk=close.pk).priority == "high"


def test_a_recall_is_a_sign_of_life_too(dana):
    """Given a high note edited 40 days ago but recalled 3 days ago, it stays high."""
    recalled = note(dana, "Team lead", days_idle=40, priority="high")
    MemoryStats.objects.filter(memory=recalled).update(last_accessed_at=timezone.now() - timedelta(days=3))
    note(dana, "Today", days_idle=0)

    assert user_notes.lower_idle_high().lowered == []


def test_the_space_field_wins_over_the_setting_and_zero_turns_lowering_off(dana, user, settings):
    """Given the setting at 30 days, a space's high_idle_days of 5 lowers a note idle 10
    days there; a space with 0 never lowers; a project space is never touched."""
    settings.SAM_USER_HIGH_IDLE_DAYS = 30
    dana.high_idle_days = 5
    dana.save()
    quick = note(dana, "Short idle", days_idle=10, priority="high")
    note(dana, "Today", days_idle=0)
    never = SpaceFactory(slug="never", kind="user", high_idle_days=0, members={user: "owner"})
    kept = note(never, "Kept high", days_idle=90, priority="high")
    note(never, "Today", days_idle=0)
    project = SpaceFactory(slug="webshop-x", kind="project", members={user: "owner"})
    project_note = note(project, "Project rule", days_idle=90, priority="high")
    note(project, "Today", days_idle=0)

    assert user_notes.lower_idle_high().lowered == [quick.id]
    assert Memory.objects.get(pk=kept.pk).priority == "high"
    assert Memory.objects.get(pk=project_note.pk).priority == "high"


def test_a_paused_space_is_left_alone_and_a_second_run_lowers_nothing_more(dana, user):
    idle = note(dana, "Idle", days_idle=60, priority="high")
    note(dana, "Today", days_idle=0)
    paused = SpaceFactory(slug="paused", kind="user", members={user: "owner"})
    frozen = note(paused, "Frozen", days_idle=60, priority="high")
    note(paused, "Today", days_idle=0)
    paused.mode = "paused"
    paused.save()

    first = user_notes.lower_idle_high()
    second = user_notes.lower_idle_high()

    assert first.lowered == [idle.id]
    assert first.skipped_spaces == {"paused": "mode is paused"}
    assert second.lowered == []
    assert Memory.objects.get(pk=frozen.pk).priority == "high"
    assert Memory.objects.get(pk=idle.pk).version == 2


def test_lowering_works_in_batches(dana):
    idle = [note(dana, f"Idle {n}", days_idle=50 + n, priority="high").id for n in range(5)]
    note(dana, "Today", days_idle=0)

    report = user_notes.lower_idle_high(batch=2)

    assert sorted(report.lowered) == sorted(idle)
    assert report.batches == 3
    assert set(Memory.objects.filter(pk__in=idle).values_list("priority", flat=True)) == {"normal"}


def test_a_dry_run_lists_without_lowering(dana):
    idle = note(dana, "Idle", days_idle=60, priority="high")
    note(dana, "Today", days_idle=0)

    assert user_notes.lower_idle_high(dry_run=True).lowered == [idle.id]
    assert Memory.objects.get(pk=idle.pk).priority == "high"


# --- the cap ----------------------------------------------------------------------------

def test_over_its_cap_a_user_space_archives_low_first_then_normal_by_oldest_sign_of_life(dana):
    """Given a cap of 6 and 10 notes, when trimmed, then the 4 archived are both low notes
    (oldest first) and then the two normal notes with the oldest sign of life; core, high and
    confirmed notes stay however old. Archived, not deleted, each with an `archive` audit row."""
    dana.note_cap = 6
    dana.save()
    protected = [note(dana, "Name", days_idle=900, priority="core"),
                 note(dana, "Role", days_idle=900, priority="high"),
                 note(dana, "Confirmed", days_idle=900, reliability="confirmed")]
    low_new = note(dana, "Low new", days_idle=1, priority="low")
    low_old = note(dana, "Low old", days_idle=5, priority="low")
    normal_used = note(dana, "Normal used lately", days_idle=400, used_days_ago=2)
    normal_old = note(dana, "Normal oldest", days_idle=300)
    normal_mid = note(dana, "Normal middle", days_idle=200)
    note(dana, "Normal new", days_idle=3)
    note(dana, "Normal newest", days_idle=0)

    assert user_notes.trim_order(dana, 10)[:4] == [low_old.id, low_new.id, normal_old.id, normal_mid.id]
    report = user_notes.trim()

    archived = [low_old.id, low_new.id, normal_old.id, normal_mid.id]
    assert sorted(report.archived) == sorted(archived)
    assert len(active_ids(dana)) == 6
    assert {m.id for m in protected} | {normal_used.id} <= active_ids(dana)
    assert Memory.objects.filter(pk__in=archived, archived=True).count() == 4
    audited = AuditEvent.objects.filter(action="archive").values_list("target_id", flat=True)
    assert set(audited) == set(archived)
    assert report.over_cap == {}


def test_a_space_full_of_notes_never_trimmed_stays_over_its_cap_and_says_so(dana):
    dana.note_cap = 1
    dana.save()
    note(dana, "Name", days_idle=10, priority="core")
    note(dana, "Role", days_idle=10, priority="high")
    low = note(dana, "Low", days_idle=1, priority="low")

    report = user_notes.trim()

    assert report.archived == [low.id]
    assert report.over_cap == {"dana": 1}


def test_the_cap_comes_from_the_setting_unless_the_space_says_and_zero_means_none(dana, user, settings):
    settings.SAM_USER_NOTE_CAP = 2
    for n in range(3):
        note(dana, f"Note {n}", days_idle=10 - n)
    uncapped = SpaceFactory(slug="uncapped", kind="user", note_cap=0, members={user: "owner"})
    for n in range(3):
        note(uncapped, f"Note {n}", days_idle=10 - n)
    project = SpaceFactory(slug="webshop-y", kind="project", members={user: "owner"})
    for n in range(3):
        note(project, f"Note {n}", days_idle=10 - n)

    report = user_notes.trim()

    assert len(report.archived) == 1
    assert len(active_ids(dana)) == 2
    assert len(active_ids(uncapped)) == 3
    assert len(active_ids(project)) == 3


def test_trimming_in_batches_archives_exactly_what_is_over(dana):
    dana.note_cap = 2
    dana.save()
    for n in range(7):
        note(dana, f"Note {n}", days_idle=20 - n)

    report = user_notes.trim(batch=2)

    assert len(report.archived) == 5
    assert len(active_ids(dana)) == 2
    assert user_notes.trim().archived == []


def test_a_new_note_settling_trims_its_user_space(dana, on_commit):
    """Given a cap of 3 and three notes, when a fourth is written and embedded (the settle
    step runs), then the space holds three again: the oldest went to the archive."""
    dana.note_cap = 3
    dana.save()
    oldest = note(dana, "Oldest", days_idle=30)
    note(dana, "Middle", days_idle=20)
    note(dana, "Newer", days_idle=10)

    with on_commit():
        fresh = make_memory(dana, title="Just said", content="Dana moved to Lisbon last month.")

    assert Memory.objects.get(pk=fresh.pk).embedding_status == "ready"
    assert len(active_ids(dana)) == 3
    assert Memory.objects.get(pk=oldest.pk).archived


def test_the_nightly_job_lowers_idle_high_notes_then_trims(dana):
    """Lowered notes become trimmable the same night: a cap of 2, an idle high note and two
    recent normal ones leave the two recent ones."""
    dana.note_cap = 2
    dana.save()
    idle = note(dana, "Idle high", days_idle=90, priority="high")
    note(dana, "Recent 1", days_idle=1)
    note(dana, "Recent 2", days_idle=0)

    report = maintenance.nightly()

    assert report["user_notes_lowered"] == 1
    assert report["user_notes_trimmed"] == 1
    assert Memory.objects.get(pk=idle.pk).archived


# --- settings through the API -----------------------------------------------------------

def test_a_space_owner_sets_the_cap_and_idle_days_and_bad_values_get_field_errors(api, dana):
    answer = api.patch("/api/v1/spaces/dana/", {"note_cap": 50, "high_idle_days": 7}, format="json")
    assert answer.status_code == 200, answer.content
    assert (answer.json()["note_cap"], answer.json()["high_idle_days"]) == (50, 7)
    dana.refresh_from_db()
    assert (dana.note_cap, dana.high_idle_days) == (50, 7)

    negative = api.patch("/api/v1/spaces/dana/", {"note_cap": -1, "high_idle_days": 4000}, format="json")
    assert negative.status_code == 400
    assert set(negative.json()["error"]["fields"]) == {"note_cap", "high_idle_days"}
    not_a_number = api.patch("/api/v1/spaces/dana/", {"high_idle_days": "soon"}, format="json")
    assert not_a_number.json()["error"]["fields"] == {"high_idle_days": ["Must be an integer."]}

    cleared = api.patch("/api/v1/spaces/dana/", {"note_cap": None}, format="json")
    assert cleared.json()["note_cap"] is None


def test_a_restored_note_is_a_sign_of_life_so_the_next_trim_takes_another(dana):
    dana.note_cap = 2
    dana.save()
    oldest = note(dana, "Oldest", days_idle=30)
    middle = note(dana, "Middle", days_idle=20)
    note(dana, "Newest", days_idle=10)
    assert user_notes.trim().archived == [oldest.id]

    services.memory_unarchive(actor=SYSTEM, memory_id=oldest.id, reason="still true")
    again = user_notes.trim()

    assert again.archived == [middle.id]
    assert oldest.id in active_ids(dana)


def test_a_dry_run_trim_lists_what_would_go_and_archives_nothing(dana):
    dana.note_cap = 1
    dana.save()
    old = note(dana, "Old", days_idle=30)
    note(dana, "New", days_idle=1)

    assert user_notes.trim(dry_run=True).archived == [old.id]
    assert len(active_ids(dana)) == 2
