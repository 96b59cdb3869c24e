"""Pure pieces of the web app: parameter parsing, URL forms, slugs, JSON-LD, BibTeX."""

from __future__ import annotations

import json
from datetime import date

import pytest
from starlette.datastructures import QueryParams

from papersift.core.config_search import SearchConfig
from papersift.core.paper import Author, Paper
from papersift.core.tex import plain_text, shorten
from papersift.core.urls import slugify
from papersift.engine.results import Filters, SearchRequest
from papersift.server.compress import choose_encoding
from papersift.server.meta import bibtex, dump_jsonld
from papersift.server.negotiate import qualities
from papersift.server.params import ParamError, parse_date, parse_search, search_url
from papersift.server.templating import snippet
from papersift.server.urls import parse_paper_path

CFG = SearchConfig()
KNOWN = {"cs": "cs", "cs.ir": "cs.IR", "cs.cl": "cs.CL", "cmp-lg": "cmp-lg"}


def parse(qs: str, strict: bool = False) -> SearchRequest:
    return parse_search(QueryParams(qs), CFG, strict=strict, known_categories=KNOWN)


def test_defaults() -> None:
    assert parse("") == SearchRequest(sort="newest")
    assert parse("q=graph") == SearchRequest(query="graph", sort="relevance")
    assert parse("q=&sort=relevance").sort == "newest", "nothing to rank: browse"


def test_full_request() -> None:
    req = parse(
        "q=+word++sense+&mode=keyword&category=CS.IR,cmp-lg&category=cs&researcher=Lillian%20Lee"
        "&from=1994&to=1995-02&sort=oldest&page=3&page_size=10"
    )
    assert req == SearchRequest(
        query="word sense",
        mode="keyword",
        filters=Filters(
            categories=("cs.IR", "cmp-lg", "cs"),
            researchers=("Lillian Lee",),
            date_from=date(1994, 1, 1),
            date_to=date(1995, 2, 28),
        ),
        sort="oldest",
        page=3,
        page_size=10,
    )


def test_round_trip_through_url() -> None:
    req = parse("q=a+b&category=cs.IR&researcher=X&from=2024-05&sort=newest&page=2")
    url = search_url(req, page=2)
    assert parse(url.split("?", 1)[1]) == req
    assert "page=" not in search_url(req, sort="oldest"), "any other change resets the page"


@pytest.mark.parametrize(
    ("qs", "param"),
    [
        ("page=0", "page"),
        ("page=x", "page"),
        ("page=43", "page"),
        ("page_size=101", "page_size"),
        ("mode=x", "mode"),
        ("sort=x", "sort"),
        ("from=2024-02-30", "from"),
        ("to=24", "to"),
        ("from=2025&to=2024", "from"),
        ("category=a/b", "category"),
        ("category=xx", "category"),
        ("q=" + "x" * 20001, "q"),
        ("researcher=" + "r" * 201, "researcher"),
    ],
)
def test_rejections_name_the_parameter(qs: str, param: str) -> None:
    with pytest.raises(ParamError) as err:
        parse(qs)
    assert err.value.parameter == param and err.value.message


def test_strict_mode() -> None:
    assert parse("utm_source=x&q=a").query == "a", "pages ignore parameters they do not know"
    with pytest.raises(ParamError, match="Unknown parameter 'utm_source'"):
        parse("utm_source=x", strict=True)
    with pytest.raises(ParamError):
        parse("page=1&page=2", strict=True)


def test_control_characters_are_spaces() -> None:
    assert parse("q=a%00b%1Fc%E2%80%8Bd").query == "a b c d"


def test_dates() -> None:
    assert parse_date("to", "2024-02", end=True) == date(2024, 2, 29)
    assert parse_date("from", "2024-2-3", end=False) == date(2024, 2, 3)
    assert parse_date("from", "", end=False) is None


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        ("2401.10241", ("2401.10241", None, None, "")),
        ("2401.10241v2", ("2401.10241", 2, None, "")),
        ("2401.10241-zero-bubble", ("2401.10241", None, "zero-bubble", "")),
        ("2401.10241v3-x.bib", ("2401.10241", 3, "x", ".bib")),
        ("0704.0001.md", ("0704.0001", None, None, ".md")),
        ("cmp-lg/9405001", ("cmp-lg/9405001", None, None, "")),
        ("math.AG/0601001v2-a-b", ("math.AG/0601001", 2, "a-b", "")),
        ("arXiv:2401.10241", ("2401.10241", None, None, "")),
        ("2401.102", None),
        ("cmp-lg/940500", None),
        ("../etc/passwd", None),
        ("2401.10241/similar", None),
    ],
)
def test_paper_paths(rest: str, expected: tuple[str, int | None, str | None, str] | None) -> None:
    parsed = parse_paper_path(rest)
    got = (parsed.arxiv_id, parsed.version, parsed.slug, parsed.ext) if parsed else None
    assert got == expected


def test_slugs() -> None:
    assert slugify("Zero Bubble Pipeline Parallelism") == "zero-bubble-pipeline-parallelism"
    assert slugify("$\\alpha$-Nets: Über <b>Graphs</b> & Co.") == "alpha-nets-uber-b-graphs-b-co"
    assert slugify("$$") == "paper"
    long = slugify("word " * 50)
    assert len(long) <= 80 and not long.endswith("-")


def test_plain_text_and_shorten() -> None:
    assert plain_text("A Pearson's $\\chi^2$ test at 5\\% in $O(n \\log n)$") == (
        "A Pearson's χ^2 test at 5% in O(n logn)"
    )
    assert plain_text("a 5% cut, then more") == "a 5% cut, then more", "no TeX comments"
    assert shorten("one two three four", 9) == "one two…"


def test_jsonld_cannot_close_its_script() -> None:
    text = dump_jsonld({"name": "</script><script>alert(1)</script> & more"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["name"] == "</script><script>alert(1)</script> & more"


def _paper(**kw: object) -> Paper:
    base: dict[str, object] = dict(
        arxiv_id="cmp-lg/9405001",
        version=1,
        title="Similarity {Based} Estimation}",
        abstract="x",
        authors=(Author("Ido Dagan", "dagan i"), Author("Lillian Lee", "lee l")),
        categories=("cmp-lg", "cs.CL"),
        published=date(1994, 5, 3),
        updated=date(1994, 5, 3),
    )
    base.update(kw)
    return Paper(**base)  # type: ignore[arg-type]


def test_bibtex() -> None:
    entry = bibtex(_paper(doi="10.1/x"))
    assert entry.startswith("@misc{dagan1994similarity,\n")
    assert "  author = {Ido Dagan and Lillian Lee}," in entry
    assert "  eprint = {cmp-lg/9405001}," in entry and "  doi = {10.1/x}" in entry
    assert entry.count("{") == entry.count("}"), "unbalanced braces are dropped"


def test_snippet_keeps_only_bold() -> None:
    html = snippet("a <b>b</b> &lt;c&gt; <script>x</script> <img src=x>")
    assert str(html) == "a <b>b</b> &lt;c&gt; &lt;script>x&lt;/script> &lt;img src=x>"


def test_accept_encoding() -> None:
    assert qualities("gzip, br;q=0.5, x;q=bad") == {"gzip": 1.0, "br": 0.5, "x": 0.0}
    assert qualities("Text/HTML;q=0.2, text/html ; q=0.9,,") == {"text/html": 0.9}
    choice = choose_encoding("gzip;q=0, identity")
    assert choice is None
    gz = choose_encoding("gzip")
    assert gz is not None and gz[0] == "gzip"
