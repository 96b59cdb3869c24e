"""The main flows in real headless Chromium (Debian's chromium + chromium-driver, Selenium):
search, filter by a facet, paginate, open a paper, TeX rendered by the vendored KaTeX.

Screenshots go to a temporary folder; with PAPERSIFT_SCREENSHOTS=1 they replace the ones
in docs/screenshots/ that the README shows.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

pytest_plugins = ["tests.web_fixtures"]

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
TEX_PAPER = "/papers/2606.22361"  # "p < $10^{-5}$" and "$σ$" in the abstract


def _binary(*names: str) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    chromium = _binary("chromium", "chromium-browser")
    driver_path = _binary("chromedriver")
    if not chromium or not driver_path:
        if os.environ.get("CI"):
            pytest.fail("CI needs Debian's chromium and chromium-driver for the browser tests")
        pytest.skip("chromium / chromedriver not installed")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--hide-scrollbars",
        "--lang=en-US",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=driver_path)
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if os.environ.get("PAPERSIFT_SCREENSHOTS"):
        DOCS.mkdir(parents=True, exist_ok=True)
        return DOCS
    return tmp_path_factory.mktemp("screenshots")


def wait(driver: WebDriver, timeout: float = 15) -> WebDriverWait[WebDriver]:
    return WebDriverWait(driver, timeout)


def severe_console_errors(driver: WebDriver) -> list[str]:
    """Console errors such as CSP violations or missing assets (the favicon aside)."""
    logs = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return [e["message"] for e in logs if e["level"] == "SEVERE"]


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_search_filter_paginate_open(browser: WebDriver, live_url: str, shots: Path) -> None:
    browser.get(live_url + "/")
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    browser.save_screenshot(str(shots / "home.png"))
    box = browser.find_element(By.CSS_SELECTOR, "input[name=q]")
    assert box == browser.switch_to.active_element, "the home page focuses the search box"
    box.send_keys("language models", Keys.ENTER)
    wait(browser).until(ec.url_contains("/search?"))
    assert params(browser.current_url)["q"] == ["language models"]
    hits = browser.find_elements(By.CSS_SELECTOR, ".hit")
    assert len(hits) == 24
    browser.save_screenshot(str(shots / "search.png"))

    # Filter by the first category facet: the URL and the chips show it.
    facet = browser.find_element(By.CSS_SELECTOR, ".facets section a")
    category = facet.text
    facet.click()
    wait(browser).until(ec.url_contains("category="))
    assert params(browser.current_url)["category"] == [category]
    chips = [c.text for c in browser.find_elements(By.CSS_SELECTOR, ".chip")]
    assert any(category in c for c in chips)
    for hit in browser.find_elements(By.CSS_SELECTOR, ".hit"):
        badges = [b.text for b in hit.find_elements(By.CSS_SELECTOR, ".badge")]
        assert any(b == category or b.startswith(category + ".") for b in badges)

    # Paginate the unfiltered browse list.
    browser.get(live_url + "/search")
    first = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".hit .arxiv-id")]
    browser.find_element(By.CSS_SELECTOR, ".pager a[rel=next]").click()
    wait(browser).until(ec.url_contains("page=2"))
    second = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".hit .arxiv-id")]
    assert second and not set(first) & set(second)
    current = browser.find_element(By.CSS_SELECTOR, ".pager a[aria-current=page]")
    assert current.text == "2"

    # Open a paper from the results.
    link = browser.find_element(By.CSS_SELECTOR, ".hit-title a")
    title = link.text
    link.click()
    wait(browser).until(ec.url_contains("/papers/"))
    assert browser.find_element(By.TAG_NAME, "h1").text == title
    canonical = browser.find_element(By.CSS_SELECTOR, "link[rel=canonical]")
    assert canonical.get_attribute("href") == browser.current_url
    assert not severe_console_errors(browser)


def test_tex_renders_with_katex(browser: WebDriver, live_url: str, shots: Path) -> None:
    browser.get(live_url + TEX_PAPER)  # redirects to the canonical URL
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    assert "/papers/2606.22361-" in browser.current_url
    abstract = browser.find_element(By.CSS_SELECTOR, ".abstract")
    rendered = abstract.find_elements(By.CSS_SELECTOR, ".katex")
    assert len(rendered) >= 3
    assert "$" not in abstract.text, "every $...$ became math"
    assert "p <" in abstract.text
    # KaTeX's fonts came from the site itself and were applied.
    font = browser.execute_script(
        "return getComputedStyle(document.querySelector('.katex')).fontFamily"
    )
    assert "KaTeX_Main" in font
    assert not severe_console_errors(browser)
    browser.save_screenshot(str(shots / "paper.png"))
    browser.find_element(By.CSS_SELECTOR, ".bibtex summary").click()
    assert "@misc{" in browser.find_element(By.CSS_SELECTOR, ".bibtex pre").text


def test_small_screen_layout(browser: WebDriver, live_url: str, shots: Path) -> None:
    browser.set_window_size(390, 844)
    try:
        browser.get(live_url + "/search?q=retrieval&category=cs.IR")
        width = browser.execute_script("return document.documentElement.scrollWidth")
        assert width <= 390, "no horizontal scrolling on a phone"
        browser.save_screenshot(str(shots / "search-mobile.png"))
    finally:
        browser.set_window_size(1280, 900)


def test_no_javascript_needed(browser: WebDriver, live_url: str) -> None:
    """The search form is a plain GET form: it works with scripts or without."""
    browser.get(live_url + "/search?q=digital+libraries")
    form = browser.find_element(By.CSS_SELECTOR, "form.search-form")
    assert form.get_attribute("method") == "get"
    assert form.get_attribute("action").endswith("/search")
