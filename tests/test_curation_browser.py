"""The admin's curation screens in a real browser: Chromium (tests/browser.py: the system's package, driven by
Selenium through the system's chromedriver) against SAM served by the test's live server.

A curator reviews a contradiction, merges two memories, restores a version and runs a
memory's training tests, by clicking what a person clicks. Nothing is downloaded: the
browser and its driver come from the system (`.ci/run` installs them), and the tests are
skipped, saying why, on a machine without them.
"""

from __future__ import annotations

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.urls import reverse

from governance.access import SYSTEM
from governance.services import membership_grant
from memories.lifecycle import feedback
from memories.models import Memory, ReviewItem
from retrieval.models import TrainingRun
from tests.browser import BROWSER_TESTS, close_live_server_connections, driver_fixture, log_in
from tests.factories import SpaceFactory, UserFactory, make_memory

pytestmark = BROWSER_TESTS
browser = driver_fixture()


@pytest.fixture
def curator(transactional_db, live_server, browser):
    """A curator of `webshop`, logged in to the admin in the browser."""
    cache.clear()
    user = UserFactory(username="browser-curator", is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["core", "memories", "governance", "audit", "prd", "retrieval"]))
    space = SpaceFactory(slug="webshop", name="Webshop")
    membership_grant(actor=SYSTEM, space=space, user=user, role="curator")
    log_in(browser, live_server, user)
    yield space
    close_live_server_connections()


def _messages(browser) -> str:
    from selenium.webdriver.common.by import By

    return " ".join(e.text for e in browser.find_elements(By.CSS_SELECTOR, "ul.messagelist li"))


def test_a_curator_reviews_a_contradiction(live_server, browser, curator):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    memory = make_memory(curator, title="Deploy day", content="We deploy on Fridays.")
    feedback.memory_contradict(actor=SYSTEM, memory_id=memory.id, reason="we stopped in May")
    item = ReviewItem.objects.get(kind="contested")

    browser.get(f"{live_server.url}{reverse('admin:memories_reviewitem_changelist')}")
    assert "Deploy day" in browser.page_source
    browser.find_element(By.CSS_SELECTOR, f"input[name='_selected_action'][value='{item.pk}']").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("keep_memories")
    browser.find_element(By.NAME, "index").click()

    assert "1 review items resolved" in _messages(browser)
    assert ReviewItem.objects.get(pk=item.pk).resolution == "keep"
    assert Memory.objects.get(pk=memory.id).reliability == "confirmed"


def test_a_curator_merges_two_memories(live_server, browser, curator):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    kept = make_memory(curator, title="Money as Decimal", content="Amounts are Decimal, never float.")
    other = make_memory(curator, title="No floats for money", content="Never store money as a float.")

    browser.get(f"{live_server.url}{reverse('admin:memories_memory_changelist')}")
    for memory in (kept, other):
        browser.find_element(By.CSS_SELECTOR, f"input[name='_selected_action'][value='{memory.pk}']").click()
    Select(browser.find_element(By.NAME, "action")).select_by_value("merge_selected")
    browser.find_element(By.NAME, "index").click()
    browser.find_element(By.CSS_SELECTOR, f"input[name='target'][value='{kept.pk}']").click()
    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value='Merge']").click()

    assert "Merged 1 memories" in _messages(browser)
    assert Memory.objects.get(pk=other.pk).superseded_by_id == kept.pk


def test_a_curator_restores_a_version(live_server, browser, curator):
    from selenium.webdriver.common.by import By

    from memories import services

    memory = make_memory(curator, title="Release day", content="We release on Tuesdays.")
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"content": "We release on Thursdays."})

    browser.get(f"{live_server.url}{reverse('admin:memories_memory_change', args=[quote(memory.pk)])}")
    browser.find_element(By.XPATH, "//button[contains(., 'Restore this version')]").click()

    assert "Restored version 1" in _messages(browser)
    restored = Memory.objects.get(pk=memory.pk)
    assert restored.version == 3
    assert restored.content == "We release on Tuesdays."


def test_a_curator_runs_a_memorys_training_tests(live_server, browser, curator, on_commit):
    from selenium.webdriver.common.by import By

    with on_commit():  # embedded by the real model, inline
        memory = make_memory(curator, title="Use MudSnackbar for save confirmations",
                             content="After a form saves, confirm with a short MudSnackbar message.",
                             summary="Confirm saves with a short MudSnackbar.",
                             canonical_phrases=["save confirmation"])
        make_memory(curator, title="Money as Decimal", content="Amounts are Decimal, never float.")

    browser.get(f"{live_server.url}{reverse('admin:memories_memory_change', args=[quote(memory.pk)])}")
    browser.find_element(By.LINK_TEXT, "Recall inspector and micro-training").click()
    browser.find_element(By.ID, "run-training").click()

    assert "2 of 2 passed" in _messages(browser)
    assert "pass" in browser.find_element(By.ID, "training-runs").text
    assert TrainingRun.objects.filter(memory=memory, passed=2).exists()


def test_a_curator_resolves_a_contradiction_side_by_side_field_by_field(live_server, browser, curator,
                                                                          on_commit):
    from selenium.webdriver.common.by import By

    with on_commit():  # embedded inline, so the write check runs as the worker would run it
        older = make_memory(curator, title="Indentation", content="The user prefers tabs for indentation.",
                            tags=["style"])
    with on_commit():
        newer = make_memory(curator, title="Indentation now", tags=["editor"],
                            content="The user prefers spaces for indentation.")
    item = ReviewItem.objects.get(kind="contradiction")

    browser.get(f"{live_server.url}{reverse('admin:memories_reviewitem_changelist')}")
    browser.find_element(By.LINK_TEXT, "Contradiction").click()
    table = browser.find_element(By.ID, "side-by-side").text
    assert "The user prefers tabs for indentation." in table
    assert "The user prefers spaces for indentation." in table
    assert "another preference" in browser.find_element(By.ID, "review-evidence").text
    browser.find_element(By.ID, "pick-content-other").click()
    browser.find_element(By.ID, "review-note").send_keys("spaces since the style guide")
    browser.find_element(By.ID, "resolve-merge").click()

    assert "merge done" in _messages(browser)
    merged = Memory.objects.get(pk=older.pk)
    assert merged.title == "Indentation"
    assert merged.content == "The user prefers spaces for indentation."
    assert set(merged.tags) == {"style", "editor"}
    assert Memory.objects.get(pk=newer.pk).archived
    assert ReviewItem.objects.get(pk=item.pk).resolution == "merge"


def test_a_curator_reads_a_memorys_audit_timeline(live_server, browser, curator):
    from selenium.webdriver.common.by import By

    from memories import services

    memory = make_memory(curator, title="Release day", content="We release on Tuesdays.")
    services.memory_update(actor=SYSTEM, memory_id=memory.id, expected_version=1,
                           changes={"content": "We release on Thursdays."}, reason="moved release day")

    browser.get(f"{live_server.url}{reverse('admin:memories_memory_change', args=[quote(memory.pk)])}")
    browser.find_element(By.ID, "timeline-link").click()

    rows = browser.find_elements(By.CSS_SELECTOR, "#audit-timeline tbody tr")
    assert [row.get_attribute("class") for row in rows] == ["timeline-edit", "timeline-create"]
    assert "moved release day" in rows[0].text
    assert "We release on Thursdays." in rows[0].text
