"""Hostile corpus data: HTML/JS, control characters, huge fields, bad dates, duplicate ids and
bizarre authors are imported, then every page that shows them is parsed: nothing injected
reaches the DOM or a feed, and nothing answers 5xx. Hostile XML against the OAI parser.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import lxml.etree
import lxml.html
import pytest
from markdown_it import MarkdownIt
from starlette.testclient import TestClient

from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import import_files
from papersift.indexer.fetch import HarvestError, RetryableResponse
from papersift.indexer.harvest import harvest
from papersift.indexer.oai import HostileXmlError, parse_response
from papersift.server.app import create_app
from tests.corpus import make_config, write_jsonl
from tests.recorded_server import FIXTURES, RecordedServer, Reply, serve

XSS = [
    "<script>alert('t')</script>",
    '<img src=x onerror="alert(1)">',
    "<svg/onload=alert(2)>",
    '"><iframe src="javascript:alert(3)"></iframe>',
    "</title><style>*{}</style>",
    "<![CDATA[]]><!-- x -->&lt;b&gt;&amp;",
]
CONTROL = "".join(chr(c) for c in range(32) if chr(c) not in "\t\n\r") + "\x7f\u2028\ufeff"
INJECTED_TAGS = {"script", "iframe", "svg", "style", "object", "embed"}
MD_TITLE = "x](javascript:alert(17)) [y ![i](data:image/png;base64,AAAA) <i>it</i>"
MD_ABSTRACT = (
    "- list [a](javascript:alert(1)) <img src=x onerror=alert(2)> <javascript:alert(7)> "
    "&#106;avascript: *em* `code` | t | ~~s~~ [ref]: javascript:alert(8)"
)
HOSTILE_SCHEMES = ("javascript:", "data:", "vbscript:")


def _record(arxiv_id: str, title: str, abstract: str, authors: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": arxiv_id,
        "title": title,
        "abstract": abstract,
        "authors": authors,
        "categories": "cs.IR",
        "versions": [{"version": "v1", "created": "Mon, 1 Jan 2024 10:00:00 GMT"}],
        "update_date": "2024-01-02",
        **extra,
    }


def hostile_records() -> list[dict[str, Any]]:
    return [
        _record("2401.00001", "Hostile " + XSS[0] + XSS[1], " ".join(XSS), XSS[2] + ", Bob"),
        _record("2401.00002", "Hostile control " + CONTROL, "abstract " + CONTROL, "A" + CONTROL),
        _record("2401.00003", "Hostile huge", "hostile " * 131072, "Huge Abstract"),
        _record(
            "2401.00004",
            "Hostile date",
            "bad dates",
            "Dee Date",
            update_date="2024-13-45",
            versions=[{"version": "v1", "created": "not a date"}],
        ),
        _record("2401.00005", "Hostile duplicate first", "dup one", "Dup One"),
        _record("2401.00005", "Hostile duplicate " + XSS[3], "dup two " + XSS[4], "Dup Two"),
        _record(
            "2401.00006",
            "Hostile authors " + XSS[5],
            "bizarre authors",
            "and and , , ;; et al. (((" + XSS[1] + ")))^{1} \\'{e}\\\"{o}{{{ " + "x" * 5000,
            authors_parsed=[["<b>Bold</b>", XSS[0], ""], [None, 7], []],
        ),
        _record("2401.00007", XSS[0], XSS[0], XSS[0]),
        _record(
            "2401.00008",
            MD_TITLE,
            MD_ABSTRACT,
            "[Mal](javascript:alert(3)) Lory, <b onclick=alert(4)>Bold</b> Name, Plain Person",
            comments="```\n<script>alert(5)</script>\n```",
            doi="10.1234/x)[a](javascript:alert(6))",
            **{"journal-ref": "# J. [r](data:text/html,x)"},
        ),
    ]


@pytest.fixture(scope="module")
def hostile_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Any]]:
    root = tmp_path_factory.mktemp("hostile")
    config = make_config(root)
    data = DataDir(config, create=True)
    import_files(data, [write_jsonl(root / "hostile.jsonl", hostile_records())])
    data.close()
    engine: SearchEngine = open_engine(config)
    yield engine, config
    engine.close()


@pytest.fixture(scope="module")
def hostile_client(hostile_engine: tuple[Any, Any]) -> Iterator[TestClient]:
    app = create_app(*hostile_engine)
    with TestClient(app, base_url="http://testserver", follow_redirects=True) as c:
        yield c


def _assert_clean_html(text: str) -> None:
    doc = lxml.html.document_fromstring(text)
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        if el.tag == "script":
            assert (
                el.get("src", "").startswith("/static/") or el.get("type") == "application/ld+json"
            )
        else:
            assert el.tag not in INJECTED_TAGS - {"svg"} or el.get("src", "").startswith("/")
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), f"injected {name} on <{el.tag}>"
            assert not value.strip().lower().startswith("javascript:")
        assert el.tag != "img" or el.get("src") != "x"
    for ld in doc.xpath("//script[@type='application/ld+json']"):
        json.loads(ld.text)  # still valid JSON: no </script> broke out of it
        assert "</script" not in ld.text.lower()


def _assert_clean_feed(body: bytes) -> None:
    root = lxml.etree.fromstring(body, lxml.etree.XMLParser(resolve_entities=False))
    for el in root.iter():
        local = lxml.etree.QName(el).localname if isinstance(el.tag, str) else ""
        assert local not in INJECTED_TAGS and local != "img"
        urls = [el.get("href", ""), el.text or ""] if local in ("link", "guid", "id") else []
        assert not any(u.strip().lower().startswith(HOSTILE_SCHEMES) for u in urls)


def _assert_clean_markdown(text: str) -> None:
    """Rendered as CommonMark with raw HTML allowed (as many readers do): no live markup,
    and every link or image goes to http(s) or the site."""
    html = MarkdownIt("commonmark", {"html": True}).render(text)
    doc = lxml.html.fragment_fromstring(html, create_parent="div")
    for el in doc.iter():
        if not isinstance(el.tag, str):
            continue
        assert el.tag not in INJECTED_TAGS | {"img", "b", "i"}, lxml.html.tostring(el)
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), f"injected {name} on <{el.tag}>"
            if name in ("href", "src"):
                assert value.startswith(("http://", "https://", "/")), value


def _assert_clean_svg(page: str) -> None:
    for svg in re.findall(r"<svg\b.*?</svg>", page, flags=re.S):
        root = lxml.etree.fromstring(svg.encode("utf-8"))  # well-formed XML
        for el in root.iter():
            local = lxml.etree.QName(el).localname if isinstance(el.tag, str) else ""
            assert local not in INJECTED_TAGS - {"svg"} and local != "foreignObject"
            for name, value in el.attrib.items():
                assert not name.lower().startswith("on")
                assert not value.strip().lower().startswith(HOSTILE_SCHEMES)


def _ok(client: TestClient, url: str) -> Any:
    r = client.get(url)
    assert r.status_code < 500, url
    return r


PAGES = [
    "/",
    "/search?q=hostile",
    "/search?q=hostile&sort=newest",
    "/search?q=alert",
    "/search?q=%3Cscript%3E",
    "/categories/cs.IR",
    "/researchers",
    "/feeds",
]
FEEDS = ["/rss/latest.xml", "/atom/latest.xml", "/rss/cs.IR.xml", "/rss/search.xml?q=hostile"]


def test_hostile_records_import_and_stay_findable(hostile_client: TestClient) -> None:
    body = _ok(hostile_client, "/api/v1/search?q=hostile&mode=keyword&page_size=100").json()
    ids = [h["paper"]["id"] for h in body["hits"]]
    assert len(ids) == len(set(ids)), "a duplicate id became two papers"
    assert {"2401.00001", "2401.00002", "2401.00003", "2401.00005", "2401.00006"} <= set(ids)


@pytest.mark.parametrize("url", PAGES)
def test_pages_show_hostile_text_inert(hostile_client: TestClient, url: str) -> None:
    _assert_clean_html(_ok(hostile_client, url).text)


def test_paper_and_researcher_pages_are_inert(hostile_client: TestClient) -> None:
    for arxiv_id in (
        "2401.00001",
        "2401.00002",
        "2401.00003",
        "2401.00005",
        "2401.00006",
        "2401.00007",
        "2401.00008",
    ):
        page = _ok(hostile_client, f"/papers/{arxiv_id}")
        if page.status_code == 404:
            continue
        _assert_clean_html(page.text)
        for suffix in (".bib", ".md"):
            text = _ok(hostile_client, f"/papers/{arxiv_id}{suffix}").text
            assert "\x00" not in text
        api = _ok(hostile_client, f"/api/v1/papers/{arxiv_id}")
        assert api.headers["content-type"].startswith("application/json")
        api.json()
        doc = lxml.html.document_fromstring(page.text)
        for href in doc.xpath("//a/@href"):
            if href.startswith("/researchers/"):
                _assert_clean_html(_ok(hostile_client, href).text)
    people = _ok(hostile_client, "/api/v1/researchers?q=bob").json()
    assert isinstance(people, dict)


@pytest.mark.parametrize("url", FEEDS)
def test_feeds_show_hostile_text_inert(hostile_client: TestClient, url: str) -> None:
    r = _ok(hostile_client, url)
    if r.status_code == 200:
        _assert_clean_feed(r.content)


# --- hostile XML against the OAI parser and a harvest from a local server ---

LIST = {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": "2016-01-01"}

LAUGHS = "".join(
    f'<!ENTITY lol{i} "{"".join(f"&lol{i - 1};" for _ in range(10))}">' for i in range(1, 10)
)


def _oai_with(doctype: str, title_prefix: str) -> bytes:
    body = (FIXTURES / "oai" / "GetRecordResponse.xml").read_text(encoding="utf-8")
    body = body.replace("<OAI-PMH ", f"<!DOCTYPE OAI-PMH [{doctype}]>\n<OAI-PMH ", 1)
    return body.replace("<title>", "<title>" + title_prefix, 1).encode("utf-8")


def test_billion_laughs_is_a_clear_error_not_a_truncation() -> None:
    body = _oai_with('<!ENTITY lol0 "lol">' + LAUGHS, "&lol9;")
    for encoded in (body, body.decode("utf-8").encode("utf-16")):
        with pytest.raises(HostileXmlError, match="billion laughs"):
            parse_response(200, encoded)
    truncated = (FIXTURES / "oai" / "GetRecordResponse.xml").read_bytes()[:900]
    with pytest.raises(RetryableResponse):  # no DTD: a cut-off body is fetched again
        parse_response(200, truncated)


def test_small_entity_expansion_stays_unexpanded() -> None:
    body = _oai_with('<!ENTITY lol0 "lol">' + LAUGHS[: LAUGHS.index("<!ENTITY lol3")], "&lol2;")
    (paper,) = parse_response(200, body).papers
    assert "lol" not in paper.title and len(paper.title) < 200


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def _harvest_from(recorded: RecordedServer, body: bytes, root: Path) -> HarvestError:
    recorded.add("/oai2", LIST, Reply(body, headers={"Content-Type": "text/xml"}))
    config = make_config(root, harvest={"metadata_prefix": "arXiv", "delay_seconds": 0,
                                        "retries": 3})  # fmt: skip
    data = DataDir(config)
    try:
        with pytest.raises(HarvestError) as err:
            harvest(data, url=recorded.url("/oai2"), date_from=date(2016, 1, 1))
        assert data.store.count() == 0
    finally:
        data.close()
    return err.value


def test_billion_laughs_over_http_fails_at_once(recorded: RecordedServer, tmp_path: Path) -> None:
    err = _harvest_from(recorded, _oai_with('<!ENTITY lol0 "lol">' + LAUGHS, "&lol9;"), tmp_path)
    assert isinstance(err, HostileXmlError) and "\n" not in str(err)
    assert len(recorded.requests) == 1  # not retried as a truncated body would be


def test_external_entities_are_never_fetched(recorded: RecordedServer, tmp_path: Path) -> None:
    recorded.add("/evil.dtd", {}, Reply(b'<!ENTITY leak "TOP-SECRET">'))
    recorded.add("/secret", {}, Reply(b"TOP-SECRET"))
    doctype = (
        f'<!ENTITY % ext SYSTEM "{recorded.url("/evil.dtd")}"> %ext;'
        f'<!ENTITY file SYSTEM "{recorded.url("/secret")}">'
    )
    body = _oai_with(doctype, "&leak;&file;")
    recorded.add("/oai2", LIST, Reply(body))
    data = DataDir(make_config(tmp_path, harvest={"metadata_prefix": "arXiv",
                                                  "delay_seconds": 0}))  # fmt: skip
    try:
        harvest(data, url=recorded.url("/oai2"), date_from=date(2016, 1, 1))
        (paper,) = data.store.get([data.store.docid_of("1302.2146") or 0]).values()
        assert paper.title == "The Same-Sign Dilepton Signature of RPV/MFV SUSY"
    finally:
        data.close()
    assert [path for path, _, _ in recorded.requests] == ["/oai2"]


def test_external_parameter_entity_file_is_not_loaded(tmp_path: Path) -> None:
    secret = tmp_path / "dtd.ent"
    secret.write_text('<!ENTITY leak "TOP-SECRET">', encoding="utf-8")
    body = _oai_with(f'<!ENTITY % ext SYSTEM "file://{secret}"> %ext;', "&leak;")
    (paper,) = parse_response(200, body).papers
    assert "TOP-SECRET" not in paper.title


# --- every output format for hostile papers (issue 24): markdown, SVG, feeds, JSON-LD ---

MD = {"Accept": "text/markdown"}


def test_markdown_outputs_are_inert(hostile_client: TestClient) -> None:
    paper = _ok(hostile_client, "/papers/2401.00008.md")
    assert paper.status_code == 200
    text = paper.text
    _assert_clean_markdown(text)
    rendered = MarkdownIt("commonmark", {"html": True}).render(text)
    doc = lxml.html.fragment_fromstring(rendered, create_parent="div")
    assert doc.xpath("string(//h1)") == " ".join(MD_TITLE.split())  # shown, as text
    assert "javascript:alert(17)" in doc.text_content()
    answers = [text]
    for url in ("/papers/2401.00008", "/search?q=hostile&mode=keyword", "/search?q=javascript",
                "/papers/[x](javascript:alert(1))", "/researchers?q=mal"):  # fmt: skip
        r = hostile_client.get(url, headers=MD)
        assert r.headers["content-type"].startswith("text/markdown"), url
        answers.append(r.text)
    for arxiv_id in ("2401.00001", "2401.00006", "2401.00007"):
        answers.append(_ok(hostile_client, f"/papers/{arxiv_id}.md").text)
    for answer in answers:
        _assert_clean_markdown(answer)
    html_page = _ok(hostile_client, "/papers/2401.00008").text
    people = lxml.html.document_fromstring(html_page).xpath("//a/@href")
    for href in [h for h in people if h.startswith("/researchers/")][:5]:
        r = hostile_client.get(href, headers=MD)
        assert r.headers["content-type"].startswith("text/markdown"), href
        _assert_clean_markdown(r.text)
        page = _ok(hostile_client, href).text
        _assert_clean_html(page)
        _assert_clean_svg(page)


def test_bibtex_of_a_hostile_paper_keeps_braces_balanced(hostile_client: TestClient) -> None:
    for arxiv_id in ("2401.00006", "2401.00008"):
        bib = _ok(hostile_client, f"/papers/{arxiv_id}.bib").text
        assert bib.startswith("@misc{") and bib.count("{") == bib.count("}")
        assert "\n@" not in bib  # no second entry smuggled in
