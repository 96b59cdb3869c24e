"""TeX in arXiv titles and abstracts, read where URLs, citation keys and exports are made:
slugs and keys from the text with its accents as letters folded to ASCII (not split at each
accent command), RIS with Unicode text; old slugs redirect.

Real demo papers throughout: unit checks on their titles, then a small real index of every
demo paper with TeX in its title, served over HTTP by the real app."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import bibtexparser
import httpx
import pytest
import rispy
from lxml import etree

from papersift.core.config import Config
from papersift.core.paper import Paper
from papersift.core.urls import slug, slugify
from papersift.engine.datadir import DataDir
from papersift.engine.search import open_engine
from papersift.feeds.export import bibtex_key
from papersift.indexer.build import import_files
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from tests.corpus import demo_records, make_config, write_jsonl
from tests.web_helpers import parse_html, serving

BIBLIOTHEQUE = "1909.08756"  # Biblioth\`eque de la communaut\'e assomptionniste : ...
ERUDIT = "2504.16264"  # its abstract: "metadata from \'Erudit, a Canadian publishing platform"
ETUDE = "1703.01072"  # \'Etude sur les portails et agr\'egateurs ...
# The slugs these papers had, split at each TeX accent: links to them are out there.
OLD_SLUGS = {
    BIBLIOTHEQUE: "biblioth-eque-de-la-communaut-e-assomptionniste-saisie-informatique-et",
    "cs/0506049": "exploitation-de-dictionnaires-e-lectroniques-pour-la-d-e-sambigu",
    "1201.4574": "technologie-et-pratiques-bibliographiques-associ-ees-a-l-ecriture-scientifique",
}
GREEK = {"alpha", "beta", "chi", "tau", "ell"}


def _tex_title(r: dict[str, object]) -> bool:
    title = str(r["title"])
    return "\\" in title or "$" in title


@pytest.fixture(scope="module")
def papers() -> dict[str, Paper]:
    """The demo papers with TeX in their title, and the one with \\'Erudit in its abstract."""
    chosen = [record_to_paper(r) for r in demo_records() if _tex_title(r)]
    chosen += [p for r in demo_records() if (p := record_to_paper(r)).arxiv_id == ERUDIT]
    return {p.arxiv_id: p for p in chosen}


def test_slugs_read_tex_accents(papers: dict[str, Paper]) -> None:
    want = {
        BIBLIOTHEQUE: "bibliotheque-de-la-communaute-assomptionniste-saisie-informatique-et-"
        "classement",
        "cs/0506049": "exploitation-de-dictionnaires-electroniques-pour-la-desambiguisation-"
        "semantique",
        "1201.4574": "technologie-et-pratiques-bibliographiques-associees-a-l-ecriture-"
        "scientifique-en",
        ETUDE: "etude-sur-les-portails-et-agregateurs-des-ressources-pedagogiques-universitaires",
        # Greek spelled, markup gone:
        # $\mathbf{h_\alpha}$, \textsc{DiARC}, $\text{R}^2\text{ec}$, a Unicode τ
        "1810.01605": "h-alpha-an-index-to-quantify-an-individual-s-scientific",
        "2606.26530": "diarc-distinguishing-positive-and-negative-samples-helps-improving-arc-like",
        "2505.16994": "r-2ec-towards-large-recommender-models-with-reasoning",
        "2603.04370": "tau-knowledge-evaluating-conversational-agents-over-unstructured-knowledge",
    }
    assert {i: slugify(papers[i].title) for i in want} == want
    assert slug(papers["1604.04705"].title, 30, 300).endswith("schubert-s-oeuvre")  # {\OE}uvre


def test_no_tex_command_is_a_slug_word(papers: dict[str, Paper]) -> None:
    """``\\mathbf``, ``\\textsc``, ``\\text`` are markup, not words of the title."""
    for p in papers.values():
        commands = set(re.findall(r"\\([A-Za-z]+)", p.title)) - GREEK
        words = slugify(p.title).split("-")
        assert not commands & set(words), (p.arxiv_id, p.title, words)


def test_citation_keys_read_tex_and_accents(papers: dict[str, Paper]) -> None:
    assert bibtex_key(papers[BIBLIOTHEQUE]) == "soubeyran2019bibliotheque"
    assert bibtex_key(papers["cs/0506049"]) == "brun2005exploitation"
    assert bibtex_key(papers[ETUDE]) == "henda2017etude"
    assert bibtex_key(papers["1810.01605"]) == "hirsch2018alpha"  # not ...mathbf
    orduna = next(record_to_paper(r) for r in demo_records() if r["id"] == "1310.5816")
    assert orduna.authors[0].name == "Enrique Orduña-Malea"
    assert bibtex_key(orduna).startswith("ordunamalea2013")  # not "orduamalea"


@pytest.fixture(scope="module")
def site(papers: dict[str, Paper], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Those papers in a real index (keyword side), the real app on a real socket."""
    root: Path = tmp_path_factory.mktemp("tex")
    config: Config = make_config(root)
    records = [r for r in demo_records() if record_to_paper(r).arxiv_id in papers]
    data = DataDir(config)
    import_files(data, [write_jsonl(root / "tex.jsonl", records)])
    data.close()
    engine = open_engine(config)
    with serving(create_app(engine, config)) as url:
        yield url
    engine.close()


def test_old_slugs_redirect_to_the_paper(site: str, papers: dict[str, Paper]) -> None:
    with httpx.Client(base_url=site, timeout=30) as http:
        for arxiv_id, old in OLD_SLUGS.items():
            canonical = f"/papers/{arxiv_id}-{slugify(papers[arxiv_id].title)}"
            r = http.get(f"/papers/{arxiv_id}-{old}")
            assert r.status_code == 301 and r.headers["location"] == canonical
            page = http.get(canonical)
            assert page.status_code == 200
            doc = parse_html(page.text)
            assert doc.cssselect("link[rel=canonical]")[0].get("href").endswith(canonical)
            assert "\\" not in doc.cssselect("h1")[0].text_content()  # rendered, not raw
        r = http.get(f"/papers/{BIBLIOTHEQUE}", follow_redirects=True)
        assert (
            "Bibliothèque de la communauté" in parse_html(r.text).cssselect("h1")[0].text_content()
        )


def test_sitemap_lists_the_new_slugs(site: str) -> None:
    with httpx.Client(base_url=site, timeout=30) as http:
        body = http.get("/sitemaps/papers-1.xml").content
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = etree.fromstring(body).xpath("//s:loc/text()", namespaces=ns)
    paths = {str(loc).split("/papers/", 1)[1] for loc in locs}
    assert (
        f"{BIBLIOTHEQUE}-bibliotheque-de-la-communaute-assomptionniste-saisie-"
        "informatique-et-classement" in paths
    )
    assert not {f"{i}-{old}" for i, old in OLD_SLUGS.items()} & paths


def test_exports_carry_unicode_and_keys(site: str, papers: dict[str, Paper]) -> None:
    """RIS gets Unicode text; BibTeX keeps arXiv's TeX but its keys are read words."""
    with httpx.Client(base_url=site, timeout=30) as http:
        ris = http.get("/api/v1/export", params={"format": "ris", "limit": 200})
        bib = http.get("/api/v1/export", params={"format": "bibtex", "limit": 200})
    assert ris.status_code == 200 and bib.status_code == 200
    by_id = {r["id"].removeprefix("arXiv:"): r for r in rispy.loads(ris.text)}
    assert len(by_id) == len(papers)
    assert "metadata from Érudit, a Canadian" in by_id[ERUDIT]["abstract"]
    assert by_id[ETUDE]["title"].startswith("Étude sur les portails et agrégateurs")
    assert by_id[BIBLIOTHEQUE]["title"].startswith("Bibliothèque de la communauté")
    assert by_id["1810.01605"]["title"].startswith("𝐡_α: An index")
    assert not any("\\'" in r["title"] + r["abstract"] for r in by_id.values())
    lib = bibtexparser.parse_string(bib.text)
    assert lib.failed_blocks == []
    entries = {e.fields_dict["eprint"].value: e for e in lib.entries}
    assert entries[BIBLIOTHEQUE].key == "soubeyran2019bibliotheque"
    assert (
        entries[BIBLIOTHEQUE]
        .fields_dict["title"]
        .value.startswith("{Biblioth\\`eque de la communaut\\'e")
    )
