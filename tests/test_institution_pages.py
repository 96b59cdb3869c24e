"""Institution pages over HTTP: ids, ROR ids, names, ambiguity, JSON-LD, stable ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import Institutions
from papersift.engine.ror import read_ror
from papersift.engine.search import SearchEngine
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.test_web_pages import check_head, ld_of, page

ROR = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
NCWU = "03acrzv41"  # North China University of Water Resources and Electric Power


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> Config:
    return make_config(tmp_path_factory.mktemp("inst"))


@pytest.fixture(scope="module")
def client(config: Config) -> Iterator[TestClient]:
    engine = SearchEngine(DataDir(config))
    assert engine.institutions.import_organisations(read_ror(ROR)) == 528
    with TestClient(create_app(engine, config)) as c:
        yield c
    engine.close()


def _iid(config: Config, ror_id: str) -> int:
    data = DataDir(config)
    found = Institutions(data.store).by_ror(ror_id)
    data.close()
    assert found is not None
    return found.iid


def test_institution_page(client: TestClient, config: Config) -> None:
    iid = _iid(config, NCWU)
    path = f"/institutions/{iid}-north-china-university-of-water-resources-and-electric"
    doc = page(client, path)
    check_head(doc, "http://testserver" + path)
    assert doc.cssselect("h1")[0].text_content() == (
        "North China University of Water Resources and Electric Power"
    )
    org = ld_of(doc, "Organization")
    assert org["identifier"] == "https://ror.org/" + NCWU
    assert org["address"]["addressCountry"] == "China"
    assert doc.cssselect("a.ror")[0].get("href") == "https://ror.org/" + NCWU


@pytest.mark.parametrize(
    "form",
    ["{iid}", "{iid}-wrong", NCWU, NCWU.upper(), "https://ror.org/" + NCWU,
     "North China University of Water Resources and Electric Power"],
)  # fmt: skip
def test_institution_redirects(client: TestClient, config: Config, form: str) -> None:
    iid = _iid(config, NCWU)
    r = client.get("/institutions/" + form.format(iid=iid), follow_redirects=False)
    assert r.status_code == 301
    assert r.headers["location"].startswith(f"/institutions/{iid}-north-china-university")


def test_ambiguous_name_lists_candidates(client: TestClient) -> None:
    doc = page(client, "/institutions/Institute of Physics")
    names = [a.text_content() for a in doc.cssselect("ol.institutions a")]
    assert names.count("Institute of Physics") == 3  # and one whose alias it is


@pytest.mark.parametrize("path", ["/institutions/999999", "/institutions/Nowhere Institute"])
def test_unknown_institutions_are_404(client: TestClient, path: str) -> None:
    assert client.get(path).status_code == 404


def test_institution_index_and_stable_ids(client: TestClient, config: Config) -> None:
    doc = page(client, "/institutions?q=north+china+water")
    assert [a.text_content() for a in doc.cssselect("ol.institutions a")] == [
        "North China University of Water Resources and Electric Power"
    ]
    before = _iid(config, NCWU)
    data = DataDir(config)
    Institutions(data.store).import_organisations(read_ror(ROR))  # a re-import
    data.close()
    assert _iid(config, NCWU) == before


def test_institutions_past_the_last_page(client: TestClient) -> None:
    """A page past the end says so and links back, as the researcher index does."""
    doc = page(client, "/institutions?page=5000")
    note = doc.cssselect("main .past-last")[0]
    assert "the last page is 11" in note.text_content()  # 528 institutions, 50 a page
    assert note.cssselect("a")[0].get("href") == "/institutions"
    assert "/institutions?page=11" in doc.xpath("//a[@rel='prev']/@href")
    doc = page(client, "/institutions?q=university&page=500")
    assert "the last page is" in doc.cssselect("main .past-last")[0].text_content()
