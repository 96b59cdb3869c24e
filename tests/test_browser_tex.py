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
    "1405.2517": (
        "A $35 Firewall for the Developing World",
        r"To remedy the situation, we explore whether low-cost platforms, such as Raspberry Pi "
        r"(\$35) and Cubieboard (\$59), can be used to implement security mechanisms. Our "
        r"results show that these platforms can indeed serve as enablers of security functions "
        r"for small sized deployments in the developing world, while only consuming less than "
        r"$2.5 worth of electricity per device per annum.",
    ),
    "1908.01051": (
        "Spams meet Cryptocurrencies: Sextortion in the Bitcoin Ecosystem",
        r"We discover that one single entity is likely controlling the financial backbone of "
        r"the majority of the sextortion campaigns and that the 11-month operation studied "
        r"yielded a lower-bound revenue between \$1,300,620 and \$1,352,266. We conclude that "
        r"sextortion spamming is a lucrative business.",
    ),
    "hep-th/9401109": (
        "The Superscattering Matrix for Two Dimensional Black Holes",
        r"A consistent Euclidean semi classical calculation is given for the superscattering "
        r"operator $\$ $ in the RST model for states with a constant flux of energy. The $\$ $ "
        r"operator is CPT invariant.",
    ),
    "1608.03580": (
        "Optimal Hashing-based Time-Space Trade-offs for Approximate Near Neighbors",
        r"For the $d$-dimensional Euclidean space and $n$-point datasets, we develop a data "
        r"structure with space $n^{1 + \rho_u + o(1)} + O(dn)$ and query time "
        r"$n^{\rho_q + o(1)} + d n^{o(1)}$ for every $\rho_u, \rho_q \geq 0$ such that: "
        r"\begin{equation} c^2 \sqrt{\rho_q} + (c^2 - 1) \sqrt{\rho_u} = \sqrt{2c^2 - 1}. "
        r"\end{equation} This is the first data structure that achieves sublinear query time "
        r"and near-linear space for every approximation factor $c > 1$.",
    ),
    "cs/0307049": (
        r"Limit groups and groups acting freely on $\bbR^n$-trees",
        r"We give a simple proof of the finite presentation of Sela's limit groups by using "
        r"free actions on $\bbR^n$-trees. Over $\C$ and $\Q$, for every $\eps > 0$, with "
        r"$\calC$ a class of groups.",  # the last sentence: the other shorthands
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


def test_a_currency_dollar_is_text(browser: WebDriver, tex_site: str) -> None:  # noqa: F811
    """An escaped dollar outside math is a "$" and opens no formula: 1405.2517 read
    "Raspberry Pi (\\n35)andCubieboard($59),canbeusedtoimplement...", all one italic
    formula, 1908.01051 "between$1,300,620 and \\$1,352,266"; hep-th/9401109's
    superscattering operator ``$\\$ $``, math, is a "$" twice (once "$$ $")."""
    abstract = abstract_of(browser, tex_site, "1405.2517")
    text = abstract.get_attribute("textContent")
    assert "such as Raspberry Pi ($35) and Cubieboard ($59), can be used to implement" in text
    assert "while only consuming less than $2.5 worth of electricity" in text
    assert not abstract.find_elements(By.CSS_SELECTOR, ".katex")
    assert browser.find_element(By.TAG_NAME, "h1").text == "A $35 Firewall for the Developing World"

    abstract = abstract_of(browser, tex_site, "1908.01051")
    text = abstract.get_attribute("textContent")
    assert "a lower-bound revenue between $1,300,620 and $1,352,266. We conclude" in text
    assert not abstract.find_elements(By.CSS_SELECTOR, ".katex")

    abstract = abstract_of(browser, tex_site, "hep-th/9401109")
    formulas = abstract.find_elements(By.CSS_SELECTOR, ".katex-html")
    assert [f.get_attribute("textContent") for f in formulas] == ["$", "$"]
    assert "\\" not in abstract.text
    assert not severe_console_errors(browser)


def test_an_equation_environment_is_typeset(browser: WebDriver, tex_site: str) -> None:  # noqa: F811
    """1608.03580's ``\\begin{equation}`` read as text, "c^2 √(ρ_q) + (c^2 - 1) √(ρ_u) =
    √(2c^2 - 1)."; KaTeX typesets it in display mode."""
    abstract = abstract_of(browser, tex_site, "1608.03580")
    shown = abstract.find_elements(By.CSS_SELECTOR, ".katex-display")
    assert len(shown) == 1
    assert len(shown[0].find_elements(By.CSS_SELECTOR, ".sqrt")) == 3
    assert size(browser, shown[0])[0] > size(browser, abstract)[0] / 2, "a line of its own"
    assert "begin" not in abstract.text and "√" not in abstract.text
    assert not abstract.find_elements(By.CSS_SELECTOR, ".katex-error")
    assert not severe_console_errors(browser)


def test_authors_shorthands_are_typeset(browser: WebDriver, tex_site: str) -> None:  # noqa: F811
    """cs/0307049's title read "Limit groups and groups acting freely on $\\bbR^n$-trees":
    KaTeX knows ``\\R`` but not the shorthand ``\\bbR`` authors define, nor ``\\C``,
    ``\\Q``, ``\\eps``, ``\\calC``; ``server/static/math.js`` defines them."""
    abstract = abstract_of(browser, tex_site, "cs/0307049")
    title = browser.find_element(By.TAG_NAME, "h1")
    for shown in (title, abstract):
        assert shown.find_elements(By.CSS_SELECTOR, ".katex")
        assert not shown.find_elements(By.CSS_SELECTOR, ".katex-error")
        assert "\\" not in shown.text, shown.text
    assert "ℝ" in title.get_attribute("textContent") or title.find_elements(
        By.CSS_SELECTOR, ".mathbb"
    )
    assert len(abstract.find_elements(By.CSS_SELECTOR, ".katex")) == 5
    assert not severe_console_errors(browser)
