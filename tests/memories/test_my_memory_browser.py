"""The My memory page in a real browser: Chromium (the system's package, driven by Selenium
through the system's chromedriver) against SAM served by the test's live server.

A person who is not staff signs in, browses what SAM knows about them by kind and sees where
each memory came from, corrects one (and sees the new version), deletes one, pauses their own
mode and makes their space incognito, downloads the export, forgets everything, and imports a
chat history, by clicking and typing what a person does. Each screen is saved to
var/screenshots/me/<name>.png (a few at a phone's width too) for a person to read. One browser
for the module; explicit waits, no sleeps. Skipped, saying why, without Chromium.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.cache import cache

from core.models import Space, SpaceKind
from governance.models import UserMemorySettings
from memories import services
from memories.models import ChatImport, Memory
from tests.browser import BROWSER_TESTS, close_live_server_connections, log_in, screenshot, start_chromium
from tests.factories import SpaceFactory, UserFactory, make_memory

pytestmark = BROWSER_TESTS
DESKTOP = (1280, 900)
WAIT_SECONDS = 15


@pytest.fixture(scope="module")
def downloads() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="sam-me-downloads-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def browser(downloads) -> Iterator:
    driver = start_chromium(width=DESKTOP[0], height=DESKTOP[1], downloads=downloads)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
def dana(transactional_db, live_server, browser):
    """Dana, not staff, with her personal space and a team space; the browser starts signed out."""
    cache.clear()
    user = UserFactory(username="dana", first_name="Dana")
    personal = SpaceFactory(slug="dana", name="Dana (personal)", kind=SpaceKind.USER, members={user: "owner"})
    SpaceFactory(slug="team", name="Team", members={user: "contributor"})
    browser.delete_all_cookies()
    browser.set_window_size(*DESKTOP)
    yield user, personal
    close_live_server_connections()


def wait_for(browser, condition):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, WAIT_SECONDS).until(condition)


def open_page(browser, url: str, heading: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    browser.get(url)
    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"), heading))


def shoot(browser, name: str, *, phone: bool = False) -> None:
    """The whole page as it is, at desktop width or a phone's, however long it is."""
    screenshot(browser, "me", name, phone=phone)


def tab_order(browser, presses: int) -> list[str]:
    """What Tab reaches from the top of the page, by its accessible text, in order."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    browser.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    reached = []
    for _ in range(presses):
        ActionChains(browser).send_keys(Keys.TAB).perform()
        focused = browser.switch_to.active_element
        reached.append(" ".join((focused.get_attribute("textContent") or focused.get_attribute("value")
                                 or "").split()))
    return reached


def message(browser, containing: str = "") -> str:
    """The text of the page's message that holds `containing`, once one is shown.

    Read inside the wait: right after a second form is sent, the previous page's message is
    still shown until the new page replaces it, and an element read then goes stale (which
    Chrome reports either as stale or, mid-navigation, as a node that "does not belong to the
    document": both are WebDriverExceptions, and the next poll reads the new page)."""
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.common.by import By

    def shown(driver) -> str | bool:
        try:
            texts = [item.text for item in driver.find_elements(By.CSS_SELECTOR, "ul.messagelist li")
                     if item.is_displayed()]
        except WebDriverException:
            return False
        return next((text for text in texts if containing in text), False)

    return wait_for(browser, shown)


def test_a_person_signs_in_and_browses_what_sam_knows_by_kind_with_provenance(live_server, browser, dana):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec

    user, personal = dana
    make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact",
                source={"type": "import", "ref": "chatgpt:conversations.json#c1:0"},
                metadata={"capture": {"source": "chatgpt", "title": "Moving plans",
                                      "evidence": "I live in Lisbon now."}})
    make_memory(personal, title="Short answers", content="The user wants answers short and concrete.",
                kind="preference")
    services.memory_create(actor=user, data={
        "space": "team", "kind": "decision", "title": "Use FastAPI",
        "content": "Decided on FastAPI because we need async handlers."})

    browser.get(f"{live_server.url}/me/")
    wait_for(browser, ec.url_contains("/sign-in/"))
    # By keyboard: the username field, Tab to the password, Enter to sign in.
    username = browser.find_element(By.ID, "id_username")
    username.click()
    username.send_keys("dana")
    username.send_keys(Keys.TAB)
    assert browser.switch_to.active_element.get_attribute("id") == "id_password"
    browser.switch_to.active_element.send_keys("pw-for-tests")
    shoot(browser, "sign_in")
    browser.switch_to.active_element.send_keys(Keys.ENTER)

    wait_for(browser, ec.url_to_be(f"{live_server.url}/me/"))
    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"), "My memory"))
    headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#content h2")]
    assert headings == ["Facts", "Preferences", "Knowledge (decisions, solutions, standards…)"]
    lisbon = browser.find_element(By.XPATH, "//article[.//h3[text()='Lives in Lisbon']]").text
    assert "chatgpt:conversations.json#c1:0" in lisbon
    assert "chatgpt conversation “Moving plans”" in lisbon
    assert "I live in Lisbon now." in lisbon
    shoot(browser, "home")
    shoot(browser, "home_phone", phone=True)
    # By keyboard from the top: the skip link first, then the page's navigation, the kinds,
    # and the memories' actions, in reading order.
    order = tab_order(browser, 24)
    assert order[0] == "Skip to main content"
    assert order.index("What SAM knows") < order.index("Forget me") < order.index("All (3)") \
        < order.index("Correct “Lives in Lisbon”") < order.index("Delete “Lives in Lisbon”")

    browser.find_element(By.PARTIAL_LINK_TEXT, "Facts (1)").click()
    wait_for(browser, ec.url_contains("kind_group=fact"))
    titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "article h3")]
    assert titles == ["Lives in Lisbon"]
    assert browser.find_element(By.PARTIAL_LINK_TEXT, "Facts (1)").get_attribute("aria-current") == "page"
    shoot(browser, "home_facts")


def test_a_person_corrects_a_memory_and_sees_the_new_version_then_deletes_one(live_server, browser, dana):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    user, personal = dana
    lisbon = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    old = make_memory(personal, title="Uses Vim", content="The user edits code in Vim daily.", kind="fact")
    log_in(browser, live_server, user)

    open_page(browser, f"{live_server.url}/me/", "My memory")
    card = "//article[.//h3[text()='{}']]//a[starts-with(., '{}')]"
    browser.find_element(By.XPATH, card.format("Lives in Lisbon", "Correct")).click()
    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"), "Correct a memory"))
    title = browser.find_element(By.ID, "id_title")
    title.clear()
    title.send_keys("Lives in Porto")
    content = browser.find_element(By.ID, "id_content")
    content.clear()
    content.send_keys("The user lives in Porto since May.")
    browser.find_element(By.ID, "id_reason").send_keys("moved in May")
    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value='Save as a new version']").click()

    assert message(browser) == "Saved as version 2."
    rows = [row.text for row in browser.find_elements(By.CSS_SELECTOR, "table.me-table tbody tr")]
    assert rows[0].startswith("2 (current)")
    assert "moved in May" in rows[0]
    assert "Lives in Lisbon" in rows[1]
    assert Memory.objects.get(pk=lisbon.id).title == "Lives in Porto"
    shoot(browser, "edit")
    shoot(browser, "edit_phone", phone=True)

    open_page(browser, f"{live_server.url}/me/", "My memory")
    browser.find_element(By.XPATH, card.format("Uses Vim", "Delete")).click()
    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"), "Delete a memory"))
    assert Memory.objects.filter(pk=old.id).exists()  # asking is not deleting
    shoot(browser, "delete")
    browser.find_element(By.CSS_SELECTOR, "input[value='Delete for good']").click()

    assert message(browser) == "Deleted “Uses Vim”."
    assert "Uses Vim" not in browser.find_element(By.ID, "content").text
    assert not Memory.objects.filter(pk=old.id).exists()


def test_a_person_pauses_their_mode_and_makes_their_space_incognito(live_server, browser, dana):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    user, personal = dana
    log_in(browser, live_server, user)
    open_page(browser, f"{live_server.url}/me/modes/", "Memory modes")

    Select(browser.find_element(By.ID, "id_me-mode")).select_by_value("paused")
    browser.find_element(By.CSS_SELECTOR, "input[value='Set my mode']").click()
    assert message(browser) == "Your own mode is paused: the store is read-only until resumed."

    Select(browser.find_element(By.ID, "id_dana-mode")).select_by_value("incognito")
    browser.find_element(By.CSS_SELECTOR, "input[aria-label='Set the mode of Dana (personal)']").click()
    assert message(browser, containing="Space") == (
        "Space “Dana (personal)” is incognito: answer, but write nothing durable.")
    assert not browser.find_elements(By.ID, "id_team-mode")  # a contributor does not set the team's mode

    assert UserMemorySettings.objects.get(user=user).mode == "paused"
    assert Space.objects.get(pk=personal.pk).mode == "incognito"
    shoot(browser, "modes")
    shoot(browser, "modes_phone", phone=True)


def test_a_person_downloads_everything_sam_knows_about_them(live_server, browser, dana, downloads):
    from selenium.webdriver.common.by import By

    user, personal = dana
    lisbon = make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    log_in(browser, live_server, user)
    open_page(browser, f"{live_server.url}/me/export/", "Take it with you")
    shoot(browser, "export")
    target = downloads / "sam-about-me.jsonl"
    target.unlink(missing_ok=True)

    browser.find_element(By.CSS_SELECTOR, "input[type='submit'][value^='Download']").click()

    wait_for(browser, lambda _: target.exists() and target.stat().st_size > 0)
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [(row["id"], row["title"], row["space"]) for row in rows] == [
        (lisbon.id, "Lives in Lisbon", "dana")]


def test_a_person_forgets_everything_after_confirming(live_server, browser, dana):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    user, personal = dana
    make_memory(personal, title="Lives in Lisbon", content="The user lives in Lisbon.", kind="fact")
    services.memory_create(actor=user, data={
        "space": "team", "kind": "decision", "title": "Use FastAPI",
        "content": "Decided on FastAPI because we need async handlers."})
    log_in(browser, live_server, user)
    open_page(browser, f"{live_server.url}/me/forget/", "Forget everything about me")
    shoot(browser, "forget")

    # Unconfirmed, the browser keeps the form (the box is required) and nothing goes.
    browser.find_element(By.CSS_SELECTOR, "input[value='Forget everything about me']").click()
    assert browser.current_url == f"{live_server.url}/me/forget/"
    assert Memory.objects.count() == 2
    browser.find_element(By.ID, "id_confirm").click()
    browser.find_element(By.ID, "id_written_elsewhere").click()
    browser.find_element(By.CSS_SELECTOR, "input[value='Forget everything about me']").click()

    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"), "Forgotten"))
    assert "Receipt" in browser.find_element(By.ID, "content").text
    assert "1 deleted" in browser.find_element(By.ID, "content").text
    shoot(browser, "forgotten")
    assert not Memory.objects.exists()
    browser.find_element(By.LINK_TEXT, "See what SAM knows about you now").click()
    wait_for(browser, ec.text_to_be_present_in_element((By.ID, "content"), "SAM knows nothing about you yet"))


def test_a_person_uploads_a_chat_history_and_reads_its_report(live_server, browser, dana, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    user, _ = dana
    history = tmp_path / "history.jsonl"
    said = {"conversation_id": "c1", "role": "user", "content": "I speak German."}
    history.write_text(json.dumps(said) + "\n")
    log_in(browser, live_server, user)
    open_page(browser, f"{live_server.url}/me/imports/", "My imports")

    Select(browser.find_element(By.ID, "id_space")).select_by_value("dana")
    Select(browser.find_element(By.ID, "id_source")).select_by_value("jsonl")
    browser.find_element(By.ID, "id_file").send_keys(str(history))
    browser.find_element(By.ID, "id_allow_source").click()
    shoot(browser, "imports_upload")
    browser.find_element(By.CSS_SELECTOR, "input[value='Upload and import']").click()

    wait_for(browser, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "#content h1"),
                                                       "Import of history.jsonl"))
    report = browser.find_element(By.ID, "content").text
    assert "Memories created 1" in report
    assert "done" in report
    shoot(browser, "import_report")
    chat_import = ChatImport.objects.get()
    assert chat_import.created_by == user

    open_page(browser, f"{live_server.url}/me/imports/", "My imports")
    row = browser.find_element(By.CSS_SELECTOR, "table.me-table tbody tr").text
    assert "history.jsonl" in row
    shoot(browser, "imports")
    shoot(browser, "imports_phone", phone=True)
    open_page(browser, f"{live_server.url}/me/", "My memory")
    assert "The user speaks German." in browser.find_element(By.ID, "content").text
