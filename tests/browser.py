"""What browser tests share: headless Chromium driven by Selenium, a signed-in session, screenshots.

The browser and its driver are the system's packages (`apt-get install chromium
chromium-driver`; `.ci/run` installs them); nothing is downloaded. On a machine without them
the tests are skipped, saying why. A test module opens one browser for all its tests:

    from tests.browser import BROWSER_TESTS, driver_fixture, log_in, screenshot

    pytestmark = BROWSER_TESTS
    browser = driver_fixture()          # module-scoped: one Chromium per module

    def test_something(live_server, browser, transactional_db):
        log_in(browser, live_server, user)
        browser.get(f"{live_server.url}/admin/")
        screenshot(browser, "admin", "index")   # var/screenshots/admin/index.png

Waits are explicit (`wait_for`); the driver's implicit wait only covers element look-ups.
"""

from __future__ import annotations

import base64
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
# A laptop's screen: what "fits on the page" is measured at; and a phone's.
DESKTOP = (1400, 1000)
PHONE = (390, 844)
# Where the test run leaves its screenshots, one folder per area (admin, me, ...).
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"

BROWSER_TESTS = [
    pytest.mark.browser,
    pytest.mark.skipif(not (CHROMIUM and CHROMEDRIVER),
                       reason="Chromium and chromedriver are not installed "
                              "(apt-get install chromium chromium-driver)"),
]


def start_chromium(*, width: int = DESKTOP[0], height: int = DESKTOP[1],
                   downloads: Path | None = None) -> Any:
    """A headless Chromium of the system's that reaches no host but this machine (and Selenium
    Manager fetches nothing); files it downloads go to `downloads`, without asking."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ["SE_OFFLINE"] = "true"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 f"--window-size={width},{height}", "--hide-scrollbars",
                 # Only the live server answers: a page that needs the internet shows it here.
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    if downloads is not None:
        options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                                  "download.prompt_for_download": False})
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    if downloads is not None:
        driver.execute_cdp_cmd("Browser.setDownloadBehavior",
                               {"behavior": "allow", "downloadPath": str(downloads)})
    driver.implicitly_wait(5)
    return driver


def driver_fixture(*, width: int = DESKTOP[0], height: int = DESKTOP[1]) -> Callable[..., Any]:
    """A module-scoped fixture that yields one Chromium for the module's tests, quit at its end.

    Assign it to the name the tests ask for: `browser = driver_fixture()`.
    """

    @pytest.fixture(scope="module")
    def driver() -> Iterator[Any]:
        chromium = start_chromium(width=width, height=height)
        try:
            yield chromium
        finally:
            chromium.quit()

    return driver


def log_in(driver: Any, live_server: Any, user: Any) -> None:
    """Sign `user` in, in the browser, by the session cookie of a test client's login."""
    client = Client()
    client.force_login(user)
    driver.delete_all_cookies()
    driver.get(f"{live_server.url}/admin/login/")
    driver.add_cookie({"name": settings.SESSION_COOKIE_NAME,
                       "value": client.cookies[settings.SESSION_COOKIE_NAME].value, "path": "/"})


def wait_for(driver: Any, css: str, *, timeout: float = 10) -> Any:
    """The first element matching `css` once it is visible (TimeoutException after `timeout`)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(
        expected_conditions.visibility_of_element_located((By.CSS_SELECTOR, css)))


def screenshot(driver: Any, area: str, name: str, *, element: Any = None, phone: bool = False) -> Path:
    """Save the whole page (its full height, at the window's width, or laid out as on a phone:
    its viewport and touch layout), or only `element`, as var/screenshots/<area>/<name>.png
    and return the path."""
    folder = SCREENSHOTS / area
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    if element is not None:
        element.screenshot(str(path))
        return path
    if phone:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 1, "mobile": True})
    try:
        # Chromium draws beyond the window (DevTools), so the window, and what later steps
        # measure in it, stays the size of a screen.
        content = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})["cssContentSize"]
        shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": PHONE[0] if phone else content["width"],
                     "height": min(content["height"], 8000), "scale": 1},
        })
    finally:
        if phone:
            driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


def close_live_server_connections() -> None:
    """End the live server threads' database connections, which would keep the test
    database from being dropped or flushed."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                       "WHERE datname = current_database() AND pid <> pg_backend_pid()")
