"""The guides' examples (home "Try ...", /developers, /llms.txt) come from the index served:
every example link finds something, on the session's demo sample and on other papers, and
none of the demo's ids or words shows where the index does not hold them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import shlex
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.core.taxonomy import category_name
from papersift.engine.datadir import DataDir
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.examples import index_examples
from papersift.engine.institutions import Institutions
from papersift.engine.results import SearchRequest
from papersift.engine.ror import read_ror
from papersift.engine.search import SearchEngine, open_engine
from papersift.indexer.build import index_backlog
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from papersift.server.context import AppContext
from tests.corpus import make_config
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

FIXTURES = Path(__file__).parent / "fixtures"
OTHER = FIXTURES / "snapshot" / "kaggle-head200.jsonl"  # 0704.0001-0200: physics, maths
ROR = FIXTURES / "ror" / "ror_subset_v2.jsonl.gz"
NCWU = "03acrzv41"  # North China University of Water Resources and Electric Power
ROOT = "http://testserver"
# Placeholders of the URL forms, which are no examples to follow.
FORMS = ("QUERY", "ARXIV_ID", "CATEGORY", "ROR_ID", "SLUG", "NAME", "YYYY", "/ID", "=ID")
# What the guides quoted from the demo corpus before they drew on the index.
DEMO = ("2401.10241", "cmp-lg", "bornmann", "05gq02987", "cs.DC", "cs.CL", "cs.IR", "pipeline",
        "word sense", "cite software", "v1/researchers/42", "researcher_id=42")  # fmt: skip
# Lists that a graph fills (references, citations): found by enrichment, none here.
GRAPH = ("/references", "/citations", "/api/v1/export")


def example_links(client: TestClient) -> dict[str, set[str]]:
    """The site-relative URLs each guide gives as examples to follow."""
    home = parse_html(client.get("/").text)
    dev = parse_html(client.get("/developers").text)
    curls = re.findall(
        r"curl (?:-L )?(?:-H '[^']*' )?'" + ROOT + r"([^']+)'",
        "\n".join(  # all but the example of an error
            t for c in dev.cssselect("pre code") if '"error"' not in (t := c.text_content())
        ),
    )
    codes = [c.text_content() for c in dev.cssselect("code")]
    llms = re.findall(r"`" + ROOT + r"(/[^`]*)`", client.get("/llms.txt").text)
    links = {
        "home": {a.get("href") for a in home.cssselect(".hero a")},
        "developers": {
            *(a.get("href") for a in dev.cssselect("article a") if a.get("href")[0] == "/"),
            *curls,
            *(c for c in codes if re.fullmatch(r"/(rss|atom)/\S+", c)),
        },
        "llms.txt": set(llms),
    }
    return {k: {u for u in v if not any(f in u for f in FORMS)} for k, v in links.items()}


def assert_finds(client: TestClient, url: str) -> None:
    """``url`` answers 200 (after redirects) with what it promises: results, a paper, a
    researcher, an institution with papers."""
    r = client.get(url, follow_redirects=True)
    assert r.status_code == 200, url
    path = url.split("?")[0]
    kind = r.headers["content-type"].split(";")[0]
    if kind == "application/json" and not path.endswith(GRAPH):
        body = r.json()
        if path == "/api/v1/search":
            assert body["total"] > 0 and body["hits"], url
        elif path in ("/api/v1/researchers", "/api/v1/institutions"):
            assert body[path.rsplit("/", 1)[1]], url
        elif path.endswith("/similar"):
            assert body["similar"], url
        elif path.startswith("/api/v1/institutions/"):
            assert body["institution"]["papers"] > 0, url
        elif path == "/api/v1/categories":
            assert body["categories"], url
    elif (kind == "text/html" and path in ("/search", "/categories")) or "/categories/" in path:
        assert parse_html(r.text).cssselect(".hit, .cat-table a"), url
    elif path.endswith(".bib"):
        assert r.text.startswith("@"), url
    elif path.startswith(("/rss/", "/atom/")):
        assert "<item>" in r.text or "<entry>" in r.text, url


def test_every_example_of_the_guides_finds_something(client: TestClient) -> None:
    links = example_links(client)
    assert len(links["home"]) == 4  # a word pair, a phrase, a question, the newest paper
    assert any(u.startswith("/api/v1/researchers?q=") for u in links["developers"])
    assert any(u.startswith("/api/v1/search?") and "from=" in u for u in links["developers"])
    for url in set().union(*links.values()):
        assert_finds(client, url)


def run_curls(client: TestClient) -> list[str]:
    """Run each ``curl`` of /developers as written (``-L`` follows redirects, curl without
    it does not): each answers 2xx, or the error its next line shows. The commands run."""
    dev = parse_html(client.get("/developers").text)
    ran = []
    for block in dev.cssselect("pre code"):
        lines = block.text_content().splitlines()
        for line, after in zip(lines, [*lines[1:], ""], strict=True):
            if not line.startswith("curl "):
                continue
            args = shlex.split(line)[1:]
            method, headers, data = "GET", {}, None
            for flag, value in zip(args, [*args[1:], ""], strict=True):
                if flag == "-X":
                    method = value
                elif flag == "-H":
                    name, _, text = value.partition(": ")
                    headers[name] = text
                elif flag == "-d":
                    data = value
            url, follow = next(a for a in args if a.startswith(ROOT)), "-L" in args
            r = client.request(
                method, url.removeprefix(ROOT), headers=headers, content=data,
                follow_redirects=follow,
            )  # fmt: skip
            if after.startswith('{"error"'):
                assert r.status_code == json.loads(after)["error"]["status"], line
            else:
                assert 200 <= r.status_code < 300, (line, r.status_code)
            ran.append(line)
    return ran


def test_the_developers_curls_work_as_written(client: TestClient, other_client: TestClient) -> None:
    ran = run_curls(client)
    assert any(c.startswith("curl -L -H 'Accept: text/markdown'") for c in ran)  # a 301 first
    assert any("/api/v1/institutions/" in c for c in run_curls(other_client))  # a ROR id: 301


def test_llms_txt_spells_out_only_urls_to_fetch(client: TestClient) -> None:
    """Placeholders are paths in code (``/papers/ARXIV_ID-SLUG``), never full URLs that a
    program would fetch and get a 404 for; every full URL answers."""
    text = client.get("/llms.txt").text
    full = set(re.findall(re.escape(ROOT) + r"[^\s`)>\]]*", text))
    assert len(full) > 10
    for url in full:
        assert not any(f in url for f in FORMS), url
        assert client.get(url, follow_redirects=True).status_code == 200, url
    for form in ("`/papers/ARXIV_ID-SLUG`", "`/rss/researchers/ID.xml`", "`/search?q=QUERY`"):
        assert form in text


def test_examples_are_the_indexs_own(engine: SearchEngine, client: TestClient) -> None:
    ex = index_examples(engine)
    newest = engine.search(SearchRequest(sort="newest", page_size=1)).hits[0].paper
    assert ex.newest is not None and ex.newest.published == newest.published
    counts = engine.category_counts()
    assert ex.category is not None and counts[ex.category] == max(counts.values())
    assert ex.old_id and "/" in ex.old_id  # the sample holds cmp-lg papers
    top, _ = engine.people.search("", limit=1)
    assert ex.researcher is not None and ex.researcher[0] == top[0].rid
    assert ex.institution is None  # nothing enriched in the session's index
    home = parse_html(client.get("/").text)
    assert ex.newest.arxiv_id in home.cssselect(".hero")[0].text_content()


@pytest.fixture(scope="module")
def other(tmp_path_factory: pytest.TempPathFactory) -> Config:
    """200 papers of April 2007 (hep, astro-ph, math, cond-mat ...), none of the demo's; the
    first five linked to an institution of the imported ROR registry. Read-only."""
    config = make_config(tmp_path_factory.mktemp("other"))
    lines = OTHER.read_text(encoding="utf-8").splitlines()
    papers = [record_to_paper(json.loads(line)) for line in lines]
    link = ((AFFILIATIONS_KEY, json.dumps([[0, NCWU, "NCWU"]])),)
    papers[:5] = [dataclasses.replace(p, extra=link) for p in papers[:5]]
    data = DataDir(config)
    try:
        assert Institutions(data.store).import_organisations(read_ror(ROR)) == 528
        data.store.upsert(papers)
        data.sync_lexical()
        index_backlog(data)
    finally:
        data.close()
    return config


@pytest.fixture(scope="module")
def other_client(other: Config) -> Iterator[TestClient]:
    engine = open_engine(other)
    with TestClient(create_app(engine, other), follow_redirects=False) as c:
        yield c
    engine.close()


def test_other_papers_get_examples_of_their_own(other_client: TestClient) -> None:
    pages = {u: other_client.get(u).text for u in ("/", "/developers", "/llms.txt", "/feeds")}
    pages["404"] = other_client.get("/papers/9912.99999").text
    for url, text in pages.items():
        quoted = [d for d in DEMO if d in text]
        assert quoted == [], url
    links = example_links(other_client)
    assert len(links["home"]) == 4
    assert f"/api/v1/institutions/{NCWU}" in links["developers"]
    for url in set().union(*links.values()):
        assert_finds(other_client, url)
    assert "0704." in pages["/llms.txt"] and "2007-04" in pages["/llms.txt"]
    assert parse_html(pages["404"]).xpath("//a[starts-with(@href, '/papers/0704.')]")


def test_other_papers_categories_have_names(other_client: TestClient) -> None:
    """hep-ph, astro-ph, math.AG ...: named on /categories, /feeds and in the API."""
    api = other_client.get("/api/v1/categories").json()["categories"]
    assert len(api) > 20
    assert all(c["name"] not in ("", c["category"]) for c in api)
    assert {"hep-ph", "astro-ph", "math.AG"} <= {c["category"] for c in api}
    for path in ("/categories", "/feeds"):
        doc = parse_html(other_client.get(path).text)
        names = {
            a.text_content(): a.getnext().text_content()
            for a in doc.cssselect("li > a:first-child")
            if a.getnext() is not None and a.getnext().get("class") == "name"
        }
        assert names["math.AG"] == "Algebraic Geometry", path
        assert all(name == category_name(code) != code for code, name in names.items()), path


def test_examples_are_kept_until_the_papers_change(small: Config) -> None:
    """Worked out once per index generation, not per request: the same object until a
    paper is added, then the new paper is the newest example."""
    engine = open_engine(small)
    c = AppContext(engine, small)
    try:
        first = asyncio.run(c.examples())
        assert first.newest is not None
        assert asyncio.run(c.examples()) is first
        later = first.newest.published + timedelta(days=30)
        added = dataclasses.replace(
            first.newest, arxiv_id=f"{later:%y%m}.99999", published=later, updated=later
        )
        engine.data.store.upsert([added])
        engine.data.sync_lexical()
        again = asyncio.run(c.examples())
        assert again is not first and again.newest is not None
        assert again.newest.arxiv_id == added.arxiv_id
        assert c.last_examples() is again
    finally:
        c.close()
        engine.close()
