"""TeX from real arXiv abstracts (short excerpts of papers of the 663k-paper index) as
real headless Chromium shows it with the vendored KaTeX: what each looked like to a
reviewer is in each test's docstring."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from papersift.engine.datadir import DataDir
from papersift.engine.search import open_engine
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from tests.corpus import make_config, write_jsonl
from tests.test_browser import browser, severe_console_errors  # noqa: F401  (the fixture)
from tests.web_helpers import serving

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.remote.webdriver import WebDriver  # noqa: E402
from selenium.webdriver.remote.webelement import WebElement  # noqa: E402
from selenium.webdriver.support import expected_conditions as ec  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

pytestmark = pytest.mark.slow  # left out by `make test-fast`

# id -> (title, abstract): excerpts of the papers' real abstracts.
PAPERS = {
    "1301.4720": (
        "The planetary spin and rotation period: A modern approach",
        r"In the ordinary gravitomagnetism the gravitational spin ($S$) orbit ($L$) coupling, "
        r"$\vec{L}\cdot\vec{S}\propto L^2$, while our model predicts that "
        r"$\vec{L}\cdot\vec{S}\propto \frac{m}{M}\,L^2$, where $M$ and $m$ are the central "
        r"and orbiting masses, respectively. The radius ($R$) and rotational period ($D$) of "
        r"tidally locked planet at a distance $a$ from its star, are related by, "
        r"$D^2\propto \sqrt{\frac{M}{m^3}}\,\,R^3$ and that $R\propto \sqrt{\frac{m}{M}}\,\, a$.",
    ),
}


def record(arxiv_id: str, title: str, abstract: str) -> dict[str, object]:
    """An arXiv snapshot record (the import's format)."""
    return {
        "id": arxiv_id, "title": title, "abstract": abstract, "authors": "A. Author",
        "categories": "physics.gen-ph", "comments": None, "journal-ref": None, "doi": None,
        "versions": [{"version": "v1", "created": "Mon, 21 Jan 2013 00:00:00 GMT"}],
        "update_date": "2013-01-21",
    }  # fmt: skip


@pytest.fixture(scope="module")
def tex_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The papers above in a real index (keyword side), served by a real uvicorn."""
    root = tmp_path_factory.mktemp("tex-site")
    config = make_config(root)
    records = [record(i, title, abstract) for i, (title, abstract) in PAPERS.items()]
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "tex.jsonl", records)])
    data.close()
    engine = open_engine(config)
    with serving(create_app(engine, config)) as url:
        yield url
    engine.close()


def abstract_of(driver: WebDriver, site: str, arxiv_id: str) -> WebElement:
    """The paper's abstract once KaTeX has typeset what is in view."""
    driver.get(f"{site}/papers/{arxiv_id}")
    WebDriverWait(driver, 15).until(
        ec.presence_of_element_located((By.CSS_SELECTOR, "html.math-rendered"))
    )
    return driver.find_element(By.CSS_SELECTOR, ".abstract")


def size(driver: WebDriver, element: WebElement) -> tuple[float, float]:
    box = driver.execute_script("return arguments[0].getBoundingClientRect()", element)
    return box["width"], box["height"]


def test_vector_arrows_and_fractions_are_drawn(browser: WebDriver, tex_site: str) -> None:  # noqa: F811
    """1301.4720's ``$\\vec{L}\\cdot\\vec{S}\\propto \\frac{m}{M}\\,L^2$``: KaTeX draws the
    arrow of ``\\vec`` as an SVG it sizes by a style attribute, which the page's CSP blocked
    (a console error each): the SVG was 0 wide and the formula read "L·S ∝ m/M L²"."""
    abstract = abstract_of(browser, tex_site, "1301.4720")
    arrows = abstract.find_elements(By.CSS_SELECTOR, ".accent-body svg")
    assert len(arrows) == 4  # \vec{L} and \vec{S}, twice
    for arrow in arrows:
        width, height = size(browser, arrow)
        assert width > 3 and height > 3, "the arrow is drawn"
    # Fractions and roots, sized through element.style (not governed by CSP), as before.
    lines = abstract.find_elements(By.CSS_SELECTOR, ".mfrac .frac-line")
    assert len(lines) == 3 and all(size(browser, line)[0] > 3 for line in lines)
    roots = abstract.find_elements(By.CSS_SELECTOR, ".sqrt > .root, .sqrt .hide-tail svg")
    assert len(roots) == 2 and all(size(browser, r)[0] > 10 for r in roots)
    assert not abstract.find_elements(By.CSS_SELECTOR, ".katex-error")
    assert not severe_console_errors(browser), "no CSP violation"
