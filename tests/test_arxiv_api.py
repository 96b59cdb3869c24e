"""The arXiv API (Atom): parsing recorded responses and `add` by id into a real index."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.arxiv_api import ArxivApiError, fetch_ids, parse_feed
from papersift.indexer.fetch import Fetcher, FetchSettings, HarvestError
from papersift.indexer.harvest import add_ids
from tests.corpus import make_config
from tests.recorded_server import FIXTURES, RecordedServer, api, serve


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def ids_params(ids: str, n: int) -> dict[str, str]:
    return {"id_list": ids, "start": "0", "max_results": str(n)}


def fx() -> Fetcher:
    return Fetcher(FetchSettings(delay=0.0, backoff=0.0, retries=1, timeout=10.0))


def test_parse_entry() -> None:
    reply = api("id_1707.08567.json")
    feed = parse_feed(reply.status, reply.body)
    (p,) = feed.papers
    assert feed.total == 1
    assert (p.arxiv_id, p.version, p.published, p.updated) == (
        "1707.08567",
        1,
        date(2017, 7, 27),
        date(2017, 7, 27),
    )
    assert p.categories == ("cs.IT",) and p.comments and p.comments.startswith("44 pages")
    names = [a.name for a in p.authors]
    assert names[0] == "Kees A. Schouhamer Immink" and "Dirk Wübben" in names  # UTF-8 restored


def test_old_style_id_and_journal_ref() -> None:
    reply = api("id_astro-ph_0601001.json")
    (p,) = parse_feed(reply.status, reply.body).papers
    assert p.arxiv_id == "astro-ph/0601001" and p.journal_ref == "ActaAstron.56:1-50,2006"


def test_search_page_primary_category_first() -> None:
    reply = api("q_testing_s0_m10.json")
    feed = parse_feed(reply.status, reply.body)
    assert len(feed.papers) == 10 and feed.total == 214881
    assert all(p.categories and p.published <= p.updated for p in feed.papers)
    assert feed.papers[0].categories[0] == "cs.SE"


def test_legacy_format() -> None:
    body = (FIXTURES / "arxiv_api" / "legacy_id_list_1111.2011v2.xml").read_bytes()
    (p,) = parse_feed(200, body).papers
    assert p.arxiv_id == "1111.2011" and p.version == 2
    assert p.categories[0] == "cond-mat.str-el"


def test_error_entry_and_empty_feed() -> None:
    bad = api("id_abc.json")
    with pytest.raises(ArxivApiError, match="incorrect id format for abc"):
        parse_feed(bad.status, bad.body)
    empty = api("id_0000.0000.json")
    assert parse_feed(empty.status, empty.body).papers == []


def test_fetch_ids_over_http(recorded: RecordedServer) -> None:
    recorded.add("/api/query", ids_params("0808.05394,1707.08567", 2),
                 api("id_0808.05394_1707.08567.json"))  # fmt: skip
    with fx() as f:
        papers = fetch_ids(f, recorded.url("/api/query"), ["0808.05394", "1707.08567"])
    assert [p.arxiv_id for p in papers] == ["1707.08567"]


def test_add_ids_into_index(recorded: RecordedServer, fresh_config: Config) -> None:
    recorded.add("/api/query", ids_params("0808.05394,1707.08567", 2),
                 api("id_0808.05394_1707.08567.json"))  # fmt: skip
    recorded.add("/api/query", ids_params("1707.08567", 1), api("id_1707.08567.json"))
    config = make_config(
        fresh_config.base_dir, harvest={"api_url": recorded.url("/api/query"), "delay_seconds": 0}
    )
    data = DataDir(config)
    try:
        report, missing = add_ids(data, ["0808.05394", "1707.08567v1"])
        assert (report.added, missing) == (1, ["0808.05394"])
        result = SearchEngine(data).search(SearchRequest("Boppard workshop", mode="keyword"))
        assert [h.paper.arxiv_id for h in result.hits] == ["1707.08567"]
        again, _ = add_ids(data, ["1707.08567"])
        assert (again.added, again.updated, again.unchanged) == (0, 0, 1)
        # The forms search reads: an abs or pdf URL, arXiv:ID (the same paper, unchanged).
        for raw in ("https://arxiv.org/abs/1707.08567", "arxiv.org/pdf/1707.08567v1.pdf",
                    "arXiv:1707.08567"):  # fmt: skip
            same, _ = add_ids(data, [raw])
            assert same.unchanged == 1, raw
        with pytest.raises(HarvestError, match="not an arXiv id"):
            add_ids(data, ["abc"])
    finally:
        data.close()
