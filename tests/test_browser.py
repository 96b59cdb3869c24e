"""The main flows in real headless Chromium (Debian's chromium + chromium-driver, Selenium):
search, filter by a facet, paginate, open a paper, TeX rendered by the vendored KaTeX; and
every page type at 1280 and 390 px: no horizontal scrolling, and no serious or critical
accessibility violation found by axe-core (npm, installed by ``make test`` into
tests/browser/node_modules) injected into the page.

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

from papersift.backup import backup
from papersift.core.config import Config
from papersift.core.urls import researcher_url
from papersift.engine.datadir import DataDir
from papersift.engine.ror import read_ror
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.web_helpers import serving

pytest_plugins = ["tests.web_fixtures"]

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow  # left out by `make test-fast`

DOCS = Path(__file__).resolve().parent.parent / "docs" / "screenshots"
TEX_PAPER = "/papers/2606.22361"  # "p < $10^{-5}$" and "$σ$" in the abstract
AXE = Path(__file__).parent / "browser" / "node_modules" / "axe-core" / "axe.min.js"
ROR = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
NCWU = "03acrzv41"  # an institution of the ROR subset
WIDTHS = {"desktop": (1280, 900), "mobile": (390, 844)}


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


def rendered(driver: WebDriver, element: WebElement) -> bool:
    """Drawn and on top at its centre. (WebDriver's own is_displayed() calls anything in a
    closed <details> hidden, even where CSS shows it, as the filter sidebar's does.)"""
    found: bool = driver.execute_script(
        "const el = arguments[0]; el.scrollIntoView({block: 'center'});"
        "const r = el.getBoundingClientRect(); if (!r.width || !r.height) return false;"
        "const top = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);"
        "return top !== null && (top === el || el.contains(top));",
        element,
    )
    return found


def click_rendered(driver: WebDriver, element: WebElement) -> None:
    """A user's click on an element that ``rendered`` says they can see."""
    assert rendered(driver, element)
    driver.execute_script("arguments[0].click()", element)


def params(url: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(url).query)


def test_search_filter_paginate_open(browser: WebDriver, live_url: str, shots: Path) -> None:
    browser.get(live_url + "/")
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    box = browser.find_element(By.CSS_SELECTOR, "input[name=q]")
    assert box == browser.switch_to.active_element, "the home page focuses the search box"
    box.send_keys("language models", Keys.ENTER)
    wait(browser).until(ec.url_contains("/search?"))
    assert params(browser.current_url)["q"] == ["language models"]
    hits = browser.find_elements(By.CSS_SELECTOR, ".hit")
    assert len(hits) == 24

    # Filter by the first category facet: the URL and the chips show it.
    facet = browser.find_element(By.CSS_SELECTOR, ".facets section a")
    category = facet.get_attribute("textContent")
    click_rendered(browser, facet)
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
    assert loaded_katex(browser)
    browser.find_element(By.CSS_SELECTOR, ".bibtex summary").click()
    assert "@misc{" in browser.find_element(By.CSS_SELECTOR, ".bibtex pre").text


def test_highlighted_formula_in_a_snippet_renders(browser: WebDriver, live_url: str) -> None:
    """A query term inside a formula marks the formula whole (engine.snippet_math): a mark
    inside it left two lone $ that KaTeX paired across the text between."""
    browser.get(live_url + "/search?q=m_A+core+value")
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    hit = browser.find_element(By.XPATH, "//*[@class='hit'][.//*[text()='arXiv:1306.2604']]")
    snippet = hit.find_element(By.CSS_SELECTOR, ".snippet")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", snippet)
    wait(browser).until(lambda _: snippet.find_elements(By.CSS_SELECTOR, "b .katex"))
    text = snippet.get_attribute("textContent") or ""
    assert "$" not in text, "every formula was typeset, none shown as raw TeX"
    assert "core" in [b.text for b in snippet.find_elements(By.TAG_NAME, "b")]
    assert not snippet.find_elements(By.CSS_SELECTOR, ".katex-error")
    assert not severe_console_errors(browser)


def loaded_katex(browser: WebDriver) -> bool:
    """Whether the page fetched KaTeX's script (math.js loads it only for pages with TeX)."""
    names = browser.execute_script(
        "return performance.getEntriesByType('resource').map(function (e) { return e.name; })"
    )
    return any("katex.min" in n for n in names)


def test_katex_only_where_there_is_tex(browser: WebDriver, live_url: str) -> None:
    browser.get(live_url + "/search?q=xkqzvwp+flurbish")
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    assert not loaded_katex(browser), "a page without TeX does not fetch KaTeX"


FIRST_TEX = r"""
var tex = /\$|\\\(|\\\[/;
var all = document.querySelectorAll('.math');
for (var i = 0; i < all.length; i++) {
  if (tex.test(all[i].textContent)) {
    return [i, all[i].getBoundingClientRect().top, window.innerHeight];
  }
}
return null;
"""


def test_tex_far_down_a_list_loads_katex_when_scrolled_to(
    browser: WebDriver, live_url: str
) -> None:
    """KaTeX is fetched only when an element holding TeX comes near the viewport."""
    for category in ("cs.DL", "cs.IR", "cs.CL", "cs.AI"):
        for sort in ("oldest", "newest"):
            browser.get(f"{live_url}/search?category={category}&sort={sort}&page_size=100")
            wait(browser).until(ec.presence_of_element_located((By.TAG_NAME, "footer")))
            first = browser.execute_script(FIRST_TEX)
            if first is not None and first[1] > first[2] + 1000:  # well below the fold
                break
        else:
            continue
        break
    else:
        pytest.fail("no listing of the test corpus has TeX far below the fold")
    wait(browser).until(ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered")))
    assert not loaded_katex(browser), "TeX below the fold does not fetch KaTeX at load"
    assert not browser.find_elements(By.CSS_SELECTOR, ".katex")
    node = browser.find_elements(By.CSS_SELECTOR, ".math")[first[0]]
    browser.execute_script("arguments[0].scrollIntoView()", node)
    wait(browser).until(lambda _: node.find_elements(By.CSS_SELECTOR, ".katex"))
    assert loaded_katex(browser)
    assert not severe_console_errors(browser)


# A query of one long word (a pasted URL, a chemical name) that nothing matches: the empty
# state quotes it whole, and it ran out of its box and across the filters (review, session 37).
LONG_WORD = "pneumonoultramicroscopicsilicovolcanoconiosis" * 3


def test_small_screen_layout(browser: WebDriver, live_url: str, shots: Path) -> None:
    browser.set_window_size(390, 844)
    try:
        for path in ("/search?q=retrieval&category=cs.IR", f"/search?q={LONG_WORD}"):
            browser.get(live_url + path)
            width = browser.execute_script("return document.documentElement.scrollWidth")
            assert width <= 390, f"no horizontal scrolling on a phone: {path}"
    finally:
        browser.set_window_size(1280, 900)


def test_a_long_word_stays_in_its_box(browser: WebDriver, live_url: str) -> None:
    browser.get(f"{live_url}/search?q={LONG_WORD}")
    for box in browser.find_elements(By.CSS_SELECTOR, ".empty, .hint"):
        inside = browser.execute_script("return arguments[0].scrollWidth", box)
        assert inside <= box.size["width"], box.get_attribute("class")


def test_no_javascript_needed(browser: WebDriver, live_url: str) -> None:
    """The search form is a plain GET form: it works with scripts or without."""
    browser.get(live_url + "/search?q=digital+libraries")
    form = browser.find_element(By.CSS_SELECTOR, "form.search-form")
    assert form.get_attribute("method") == "get"
    assert form.get_attribute("action").endswith("/search")


@pytest.fixture(scope="module")
def site(built_config: Config, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A copy of the session's index with the ROR subset imported (institution pages have
    something to show), served by a real uvicorn."""
    root = tmp_path_factory.mktemp("site")
    config = make_config(root)
    backup(built_config, config.data_dir)
    engine = SearchEngine(DataDir(config))
    assert engine.institutions.import_organisations(read_ror(ROR)) > 0
    with serving(create_app(engine, config)) as url:
        yield url
    engine.close()


def page_types(site: str) -> dict[str, str]:
    """One URL of every kind of page, by a short name (the screenshot's file name)."""
    import httpx

    with httpx.Client(base_url=site) as c:
        person = c.get("/api/v1/researchers", params={"q": "lutz bornmann"}).json()
        found = person["researchers"][0]
        inst = c.get(f"/api/v1/institutions/{NCWU}", follow_redirects=True).json()
    return {
        "home": "/",
        "search": "/search?q=language+models",
        "search-empty": "/search?q=qqqzzzxxyy",
        "paper": TEX_PAPER,
        "researcher": researcher_url(found["id"], found["name"]),
        "researchers": "/researchers",
        "institution": str(inst["institution"]["url"]).removeprefix(site),
        "institutions": "/institutions",
        "categories": "/categories",
        "category": "/categories/cs.CL",
        "feeds": "/feeds",
        "developers": "/developers",
        "not-found": "/papers/9912.99999",
    }


def axe_violations(driver: WebDriver) -> list[dict[str, object]]:
    """axe-core's violations on the current page (all its default rules)."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    found: list[dict[str, object]] = driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then(r => done(r.violations.map("
        "v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map(n => n.target.join(' '))}))));"
    )
    return found


@pytest.mark.parametrize("layout", list(WIDTHS))
def test_every_page_type_fits_and_passes_axe(
    browser: WebDriver, site: str, shots: Path, layout: str
) -> None:
    if not AXE.is_file():
        if os.environ.get("CI"):
            pytest.fail("CI needs axe-core: make test runs npm ci in tests/browser")
        pytest.skip("axe-core not installed (npm ci --prefix tests/browser)")
    width, height = WIDTHS[layout]
    browser.set_window_size(width, height)
    browser.set_script_timeout(60)
    problems = {}
    try:
        for name, path in page_types(site).items():
            browser.get(site + path)
            wait(browser).until(ec.presence_of_element_located((By.TAG_NAME, "footer")))
            if browser.find_elements(By.CSS_SELECTOR, "script[data-katex]"):
                math = (By.CSS_SELECTOR, "html.math-rendered")
                wait(browser).until(ec.presence_of_element_located(math))
            inner = browser.execute_script("return document.documentElement.clientWidth")
            scroll = browser.execute_script("return document.documentElement.scrollWidth")
            assert scroll <= inner, f"{name} scrolls sideways at {width} px ({scroll} > {inner})"
            bad = [v for v in axe_violations(browser) if v["impact"] in ("serious", "critical")]
            if bad:
                problems[name] = bad
            suffix = "" if layout == "desktop" else "-mobile"
            browser.save_screenshot(str(shots / f"{name}{suffix}.png"))
    finally:
        browser.set_window_size(1280, 900)
    assert not problems, problems


def test_filters_come_before_results_on_a_phone(browser: WebDriver, site: str) -> None:
    """At 390 px the filters are a closed disclosure above the results; on a wide screen
    they are an open sidebar. No script involved."""
    url = site + "/search?q=language+models"
    browser.set_window_size(390, 844)
    try:
        browser.get(url)
        summary = browser.find_element(By.CSS_SELECTOR, "details.filters > summary")
        first_hit = browser.find_element(By.CSS_SELECTOR, ".hit")
        assert summary.location["y"] < first_hit.location["y"]
        facet = browser.find_element(By.CSS_SELECTOR, ".facets section a")
        assert not rendered(browser, facet)
        summary.click()
        assert rendered(browser, facet)
    finally:
        browser.set_window_size(1280, 900)
    browser.get(url)
    facet = browser.find_element(By.CSS_SELECTOR, ".facets section a")
    assert rendered(browser, facet)
    assert facet.location["x"] > browser.find_element(By.CSS_SELECTOR, ".hit").location["x"]
