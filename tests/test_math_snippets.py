"""Search snippets whose TeX the page's KaTeX can typeset (engine.snippet_math): no query
term marked inside a formula, no formula cut by a snippet's edge.

The reference is a line-by-line port of KaTeX 0.19.1 auto-render's ``splitAtDelimiters``
(the vendored ``contrib/auto-render.min.js``) with math.js's delimiters; the browser sees
each run of text between ``<b>`` marks on its own. Real demo papers throughout: every demo
paper with TeX in its title or abstract in a small real index (keyword side), searched
through ``make_hits`` and through the real app's page and API."""

from __future__ import annotations

import html
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from papersift.core.accents import accented
from papersift.core.config import Config
from papersift.core.katex_math import DELIMITERS, math_spans
from papersift.engine.datadir import DataDir
from papersift.engine.hits import ABSTRACT_SNIPPET, make_hits, snippets
from papersift.engine.plan import make_plan
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.snippet_math import WHOLE, excerpt, typesettable
from papersift.indexer.build import import_files
from papersift.server.app import create_app
from tests.corpus import demo_records, make_config, write_jsonl
from tests.web_helpers import parse_html

MATH_JS = Path(__file__).resolve().parent.parent / "server" / "static" / "math.js"
HIRSCH = "1810.01605"  # $\mathbf{h_\alpha}$: ..., "We also define the $h'_\alpha$ index ..."
LEYDESDORFF = "1810.06998"  # h{\alpha}: The Scientist as Chimpanzee or Bonobo
# The review's query was "h_alpha index Matthew" in hybrid mode; keyword mode (this index has
# no vectors) needs every word, and 1810.01605 has no "Matthew".
QUERY = "h_alpha index"
_MARK = re.compile(r"(</?b>)")


def auto_render(text: str, past_unclosed: bool = False) -> list[tuple[int, int]]:
    """The math auto-render finds in one run of text: (start, end), delimiters included.
    Ported from its ``splitAtDelimiters`` and ``findEndOfMath``, character by character;
    but an escaped dollar outside math is no delimiter, as the page shows it apart
    (``server.templating.tex_markup``). ``past_unclosed``: after an opening delimiter
    never closed, go on past it (as ``math_spans`` does) instead of leaving the rest as
    text (as auto-render does)."""
    spans = []
    at = 0
    while True:
        index = at
        while index < len(text) and not any(text.startswith(lt, index) for lt, _ in DELIMITERS):
            index += 2 if text.startswith("\\$", index) else 1
        if index >= len(text):
            return spans
        left, right = next((lt, rt) for lt, rt in DELIMITERS if text.startswith(lt, index))
        i, depth = index + len(left), 0
        while i < len(text):
            if depth <= 0 and text.startswith(right, i):
                break
            if text[i] == "\\":
                i += 1
            elif text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
            i += 1
        else:  # never closed
            if not past_unclosed:
                return spans  # the rest is text
            at = index + len(left)
            continue
        spans.append((index, i + len(right)))
        at = i + len(right)


def runs(snippet: str) -> list[tuple[str, bool]]:
    """The text runs of an HTML snippet as the browser's text nodes hold them, each with
    whether it is marked."""
    out, marked = [], False
    for piece in _MARK.split(snippet):
        if piece in ("<b>", "</b>"):
            marked = piece == "<b>"
        elif piece:
            out.append((html.unescape(piece), marked))
    return out


def check_typesettable(snippet: str, text: str) -> None:
    """What KaTeX typesets in ``snippet`` (a stretch of ``text`` with marks) is the formulas
    of ``text`` it shows, each whole: none split by a mark, none paired across text."""
    pieces = runs(snippet)
    plain = "".join(p for p, _ in pieces)
    start = text.find(plain)
    assert start >= 0, (snippet, text)
    formulas = set(math_spans(text))
    typeset = set()
    at = start
    for run, _ in pieces:
        for a, b in auto_render(run):
            assert (at + a, at + b) in formulas, ("not a formula of the text", run[a:b], snippet)
            typeset.add((at + a, at + b))
        at += len(run)
    for a, b in auto_render(text):  # as the paper's page typesets it
        if start <= a and b <= start + len(plain):
            assert (a, b) in typeset, ("formula not typeset", text[a:b], snippet)
    for a, b in formulas:  # an edge inside a formula: only one too long to show whole
        for edge in (start, start + len(plain)):
            assert not a < edge < b or b - a > WHOLE, ("cut", text[a:b], snippet)


def test_spans_are_auto_renders() -> None:
    """``math_spans`` finds what the port of auto-render finds (and, after a delimiter
    never closed, what a run starting past it would), on hand-worked texts, on every title
    and abstract of the demo corpus, and on random strings of TeX's delimiters."""
    cases = {
        "a $x$ b": [(2, 5)],
        "$$x$$ and $y$": [(0, 5), (10, 13)],
        r"\(x\) \[y\]": [(0, 5), (6, 11)],
        r"$a\$b$ c": [(0, 6)],  # an escaped $ inside math
        "${a$b}$ c": [(0, 7)],  # a $ inside braces
        "$\\sqrt{\\frac{a}{b$}}$ c": [(0, 21)],  # ... braces in braces
        "$a}$b$": [(0, 4)],  # a closing brace too many
        "$a$$b$": [(0, 3), (3, 6)],
        r"costs \$5 and $x$": [(14, 17)],  # an escaped $ outside math is text
        r"(\$35) and (\$59), less than $2.5": [],
        r"$\$ $ and $\$ $": [(0, 5), (10, 15)],  # an escaped $ inside math is math
        r"\$$x$": [(2, 5)],
        # An environment KaTeX typesets in display mode, whole (1608.03580), $ in it or not.
        r"such that: \begin{equation} c^2 \sqrt{\rho_q} = \sqrt{2c^2 - 1}. \end{equation} This": [
            (11, 79)
        ],
        r"\begin{equation*} \text{ $\alpha$-corr.} \end{equation*} $x$": [(0, 56), (57, 60)],
        r"\begin{eqnarray} x \end{eqnarray}": [],  # not one KaTeX knows
        "$$ x $y$": [(5, 8)],  # $$ never closed: auto-render stops; past it, $y$
        "a $ b": [],
    }
    for text, spans in cases.items():
        assert math_spans(text) == spans, text
    rng = random.Random(7)
    pieces = ["$", "$$", "\\", "{", "}", "a", " ", "\\(", "\\)", "\\[", "\\]", "{x}", "\\$"]
    pieces += ["\\begin{equation}", "\\end{equation}", "\\begin{align*}", "\\end{align*}"]
    made = ["".join(rng.choices(pieces, k=rng.randint(1, 30))) for _ in range(20000)]
    checked = 0
    for text in [t for r in demo_records() for t in (r["title"], r["abstract"])] + made:
        found = math_spans(text)
        assert found == auto_render(text, past_unclosed=True), text
        reference = auto_render(text)
        assert found[: len(reference)] == reference, text
        checked += bool(reference)
        until = len(text) // 2
        assert math_spans(text, until) == [s for s in found if s[0] < until], text
    assert checked > 5000


def test_delimiters_are_math_jss() -> None:
    """The delimiters are those the page gives auto-render, in its order."""
    listed = re.findall(r'left: "(.*?)", right: "(.*?)"', MATH_JS.read_text(encoding="utf-8"))
    assert tuple((lt.replace("\\\\", "\\"), rt.replace("\\\\", "\\")) for lt, rt in listed) == (
        DELIMITERS
    )


def test_marks_and_edges_on_made_up_snippets() -> None:
    text = "We define the $h'_\\alpha$ index and h{\\alpha} here, then $a+b$ end"
    made = html.escape(text).replace("alpha", "<b>alpha</b>").replace(" index", " <b>index</b>")
    assert typesettable(made, text) == (
        "We define the <b>$h&#x27;_\\alpha$</b> <b>index</b> and h<b>{\\alpha}</b> here, then "
        "$a+b$ end"
    )
    # A fragment starting and ending inside formulas: out to their edges.
    inner = html.escape(text[17:62]).replace("index", "<b>index</b>")
    assert typesettable(inner, text) == (
        "$h&#x27;_\\alpha$ <b>index</b> and h{\\alpha} here, then $a+b$"
    )
    # A formula longer than WHOLE under an edge is left out, with any mark in it.
    long = "$" + "x + " * WHOLE + "y$ tail index"
    cut = html.escape(long[WHOLE:]).replace("y$", "<b>y</b>$").replace("index", "<b>index</b>")
    assert typesettable(cut, long) == " tail <b>index</b>"
    assert typesettable("a line break \\\\<b>index</b>", "a line break \\\\index") == (
        "a line break \\\\<b>index</b>"  # after \\ a word is not a command's name
    )
    assert excerpt("a " * 10 + "$x + y$ z", 24) == "a " * 10 + "$x + y$ …"
    assert excerpt("a $" + "x " * 200 + "$ z", 24) == "a …"


@pytest.fixture(scope="module")
def tex_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SearchEngine, Config]]:
    """Every demo paper with TeX ($, a backslash) in its title or abstract, in a real index
    (keyword side)."""
    root = tmp_path_factory.mktemp("math")
    config = make_config(root)
    records = [r for r in demo_records() if any(c in r["title"] + r["abstract"] for c in "$\\")]
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "tex.jsonl", records)])
    data.close()
    engine = open_engine(config)
    yield engine, config
    engine.close()


def _math_words(engine: SearchEngine) -> list[str]:
    """Queries of the words inside the papers' formulas (each with one word outside)."""
    papers = engine.data.store.get(sorted(engine.data.store.all_text_hashes()))
    queries = []
    for paper in list(papers.values())[::4]:
        inside = [
            w
            for a, b in math_spans(paper.abstract)
            for w in re.findall(r"[A-Za-z]{2,}", paper.abstract[a:b])
        ]
        if inside:
            outside = re.findall(r"[a-z]{6,}", paper.abstract)[:1]
            queries.append(" ".join(dict.fromkeys(inside[:3] + outside)))
    return queries


def test_snippets_typeset_for_every_tex_paper(tex_engine: tuple[SearchEngine, Config]) -> None:
    """Every title and abstract snippet of every paper, for the review's query and for
    words that stand inside formulas, made in Python and by Tantivy alike; and the
    excerpts shown without a query."""
    engine, _ = tex_engine
    store = engine.data.store
    docids = sorted(store.all_text_hashes())
    papers = store.get(docids)
    queries = [
        QUERY,
        "h_alpha index Matthew",
        "alpha",
        "k nearest",
        "times faster",
        *_math_words(engine),
    ]
    assert len(queries) > 25
    marked_math = 0
    for query in queries:
        plan = make_plan(engine, SearchRequest(query, mode="keyword"), 10)
        assert plan.keyword.query is not None, query
        for words in (plan.parsed.all_text, None):  # engine.highlight's and Tantivy's
            made = make_hits(engine.data, [(d, 1.0) for d in docids], plan.keyword.query,
                             {}, {}, None, words)  # fmt: skip
            for hit in made:
                # As the snippets are made: TeX accents as letters (engine.hits).
                check_typesettable(hit.title_html, accented(hit.paper.title))
                if "<b>" in hit.abstract_html:
                    check_typesettable(hit.abstract_html, accented(hit.paper.abstract))
                marked_math += "<b>$" in hit.abstract_html
    assert marked_math  # formulas holding a query term were marked whole
    for paper in papers.values():
        _, abstract = snippets(paper, None)
        check_typesettable(abstract.removesuffix(" …"), paper.abstract)
        assert len(html.unescape(abstract)) <= ABSTRACT_SNIPPET + WHOLE


def test_the_reviews_query(tex_engine: tuple[SearchEngine, Config]) -> None:
    """The review's query: the marks went inside ``$h'_\\alpha$`` and ``{\\alpha}``."""
    engine, _ = tex_engine
    result = engine.search(SearchRequest(QUERY, mode="keyword", page_size=20))
    shown = {h.paper.arxiv_id: h for h in result.hits}
    hirsch, leydesdorff = shown[HIRSCH], shown[LEYDESDORFF]
    assert "<b>$h&#x27;_\\alpha$</b> <b>index</b>" in hirsch.abstract_html
    assert hirsch.title_html.startswith("<b>$\\mathbf{h_\\alpha}$</b>: An <b>index</b>")
    assert "The indicator <b>h{\\alpha}</b> inherits" in leydesdorff.abstract_html
    assert leydesdorff.title_html.startswith("<b>h{\\alpha}</b>:")


def _lone_dollars(run: str) -> str:
    """``run`` with what auto-render typesets taken out: a $ left is shown as text."""
    for a, b in reversed(auto_render(run)):
        run = run[:a] + run[b:]
    return run


def test_page_and_api_show_formulas_whole(tex_engine: tuple[SearchEngine, Config]) -> None:
    engine, config = tex_engine
    with TestClient(create_app(engine, config)) as client:
        page = client.get("/search", params={"q": QUERY, "mode": "keyword"})
        api = client.get("/api/v1/search", params={"q": QUERY, "mode": "keyword"})
    assert page.status_code == 200 and api.status_code == 200
    doc = parse_html(page.text)
    hits = {
        h.cssselect(".arxiv-id")[0].text_content().removeprefix("arXiv:"): h
        for h in doc.cssselect(".hit")
    }
    on_page = {}
    for arxiv_id in (HIRSCH, LEYDESDORFF):
        for selector in (".hit-title a", ".snippet"):
            element = hits[arxiv_id].cssselect(selector)[0]
            # The element's text nodes: before, in and after each mark.
            texts = [element.text or ""]
            for mark in element:
                assert mark.tag == "b" and not len(mark)
                texts += [mark.text or "", mark.tail or ""]
            assert all("$" not in _lone_dollars(t) for t in texts), (arxiv_id, texts)
            on_page[arxiv_id, selector] = [t for t in texts if t]
    assert "$h'_\\alpha$" in on_page[HIRSCH, ".snippet"]
    assert on_page[HIRSCH, ".hit-title a"][0] == "$\\mathbf{h_\\alpha}$"
    assert on_page[LEYDESDORFF, ".hit-title a"][0] == "hα"  # TeX outside math decoded
    # The API's snippet is the page's, before the page decodes TeX outside math.
    hirsch = next(h for h in api.json()["hits"] if h["paper"]["id"] == HIRSCH)
    snippet = hirsch["snippet_html"]
    assert [r for r, _ in runs(snippet)] == on_page[HIRSCH, ".snippet"]
    check_typesettable(snippet, hirsch["paper"]["abstract"])
