"""Institutions after enrichment, over HTTP: the institution filter and facet in every search
mode, ``/api/v1/institutions``, and the institution page listing its researchers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from lxml import html
from starlette.testclient import TestClient

from papersift.engine.datadir import DataDir
from papersift.engine.institutions import Institutions
from papersift.engine.ror import read_ror
from papersift.engine.search import open_engine
from papersift.indexer.build import embed_backlog
from papersift.indexer.enrich_run import enrich_files
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.test_enrich import OA_WORK, PAPERS

ROR = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
UW = "00cvxb145"  # University of Washington: three authors of the recorded OpenAlex work


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    config = make_config(tmp_path_factory.mktemp("inst"))
    data = DataDir(config)
    try:
        data.store.upsert(PAPERS)
        Institutions(data.store).import_organisations(read_ror(ROR))
        enrich_files(data, [OA_WORK])
        embed_backlog(data)
    finally:
        data.close()
    engine = open_engine(config)
    with TestClient(create_app(engine, config), follow_redirects=False) as c:
        yield c
    engine.close()


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_institution_filter_and_facet_in_every_mode(client: TestClient, mode: str) -> None:
    r = client.get("/api/v1/search", params={"q": "open access", "mode": mode})
    assert r.status_code == 200
    facet = {f["value"]: f["count"] for f in r.json()["facets"]["institutions"]}
    assert facet[UW] == 1 and facet["0213rcc28"] == 1
    names = {f["value"]: f["name"] for f in r.json()["facets"]["institutions"]}
    assert names[UW] == "University of Washington"  # the registry's name, beside the id
    r = client.get("/api/v1/search", params={"q": "open access", "mode": mode, "institution": UW})
    assert [h["paper"]["id"] for h in r.json()["hits"]] == ["1802.00001"]
    url = f"https://ror.org/{UW}"
    r = client.get("/api/v1/search", params={"mode": mode, "q": "open access", "institution": url})
    assert r.json()["total"] == 1  # the ROR URL is the same filter
    assert r.json()["request"]["institution"] == [UW]  # echoed as a bare ROR id


def test_bad_institution_is_a_400(client: TestClient) -> None:
    r = client.get("/api/v1/search", params={"institution": "harvard"})
    assert r.status_code == 400 and "ROR id" in r.text


def test_institutions_api(client: TestClient) -> None:
    body = client.get("/api/v1/institutions", params={"q": "washington"}).json()
    assert UW in [i["ror"].rsplit("/", 1)[-1] for i in body["institutions"]]
    r = client.get(f"/api/v1/institutions/{UW}")
    assert r.status_code == 301
    documented = client.get("/openapi.json").json()["paths"]["/api/v1/institutions/{id}"]
    assert "Location" in documented["get"]["responses"]["301"]["headers"]
    for url in (f"https://ror.org/{UW}", f"https%3A%2F%2Fror.org%2F{UW}"):  # as documented
        by_url = client.get(f"/api/v1/institutions/{url}")
        assert by_url.status_code == 301 and by_url.headers["location"] == r.headers["location"]
    inst = client.get(r.headers["location"]).json()["institution"]
    assert (inst["name"], inst["papers"], inst["researchers"]) == ("University of Washington", 1, 3)
    assert sorted(m["name"] for m in inst["members"]) == [
        "Ashley Farley", "Bree Norlander", "Jevin West"
    ]  # fmt: skip
    assert client.get("/api/v1/institutions/999999").status_code == 404


def test_institution_page_lists_researchers(client: TestClient) -> None:
    r = client.get(f"/institutions/{UW}", follow_redirects=True)
    assert r.status_code == 200
    doc = html.fromstring(r.text)
    members = doc.xpath("//ul[@class='members']/li/a")
    assert sorted(a.text for a in members) == ["Ashley Farley", "Bree Norlander", "Jevin West"]
    assert all(a.get("href").startswith("/researchers/") for a in members)
    assert doc.xpath(f"//a[@href='/search?institution={UW}']")


def test_search_page_shows_institution_chip_and_facet(client: TestClient) -> None:
    doc = html.fromstring(client.get("/search", params={"q": "open access"}).text)
    facet = doc.xpath("//aside[@class='facets']//section[h2='Institutions']//a/text()")
    assert "University of Washington" in facet
    doc = html.fromstring(client.get("/search", params={"institution": UW}).text)
    chips = [" ".join(a.text_content().split()) for a in doc.xpath("//a[@class='chip']")]
    assert any(c.startswith("Institution: University of Washington") for c in chips)


def test_a_name_no_institution_has(client: TestClient) -> None:
    doc = html.fromstring(client.get("/institutions", params={"q": "zzqx"}).text)
    assert "No institution's name contains “zzqx”." in doc.text_content()
    assert not doc.cssselect(".empty-state")  # the registry is there


def test_an_institution_no_paper_has_is_refused_as_an_unknown_category_is(
    client: TestClient,
) -> None:
    """A well-formed ROR id that no paper here has is a 400 naming it (API and page), in
    the shape of an unknown category's, not a silent empty list."""
    absent = "03acrzv41"  # a real ROR id; none of these papers' authors is there
    for value in (absent, f"https://ror.org/{absent}"):
        r = client.get("/api/v1/search", params={"q": "open access", "institution": value})
        category = client.get("/api/v1/search", params={"q": "open access", "category": "zz.x"})
        assert r.status_code == category.status_code == 400
        body, like = r.json(), category.json()
        assert body.keys() == like.keys() and body["error"].keys() == like["error"].keys()
        assert body["error"]["code"] == like["error"]["code"] == "bad_request"
        assert body["error"]["message"] == (
            f"Unknown institution '{value}': no paper in this index has it. "
            "See /institutions for the list."
        )
        page = client.get("/search", params={"q": "open access", "institution": value})
        assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
        assert f"Unknown institution '{value}'" in html.fromstring(page.text).text_content()
    # Beside a known one too: the filter must hold all of them.
    r = client.get("/api/v1/search", params=[("institution", UW), ("institution", absent)])
    assert r.status_code == 400
