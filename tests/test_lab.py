"""The lab declaration: config validation, anchoring members on real demo papers (alone and
through identities), and the home page's "this lab" section over HTTP."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from papersift.core.authors import parse_authors
from papersift.core.config import Config, LabConfig
from papersift.core.config_load import load_config
from papersift.core.errors import ConfigError
from papersift.core.paper import Paper
from papersift.core.setting_parsers import LabMember
from papersift.engine.datadir import DataDir
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.ror import Organisation
from papersift.engine.search import SearchEngine
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.lab import anchor_ids
from papersift.indexer.snapshot import record_to_paper
from papersift.server.app import create_app
from papersift.server.lab_view import lab_section
from tests.corpus import demo_records, make_config
from tests.test_web_pages import hit_ids, jsonld, ld_of, page

BORNMANN = "0000-0002-1825-0097"  # checksum-valid ORCID iDs (ORCID's documented examples)
MUTZ = "0000-0002-1694-233X"
OTHER = "0000-0001-5109-3700"
ROR = "03acrzv41"  # a real ROR id (from the affiliation fixture)


def lab_config(root: Path, lab: str, **sections: dict[str, Any]) -> Config:
    """``make_config`` plus a ``[lab]`` section written as TOML text."""
    make_config(root, **sections)
    path = root / "config.toml"
    path.write_text(path.read_text(encoding="utf-8") + lab, encoding="utf-8")
    return load_config(path, env={})


def members_toml(*members: tuple[str, str]) -> str:
    return "".join(f'[[lab.members]]\nname = "{n}"\norcid = "{o}"\n' for n, o in members)


# -- config --------------------------------------------------------------------------------


def test_lab_config_reads_and_normalises(tmp_path: Path) -> None:
    text = '[lab]\nname = "Scientometrics"\nror = "https://ror.org/03ACRZV41"\n' + members_toml(
        ("Lutz  Bornmann", f"https://orcid.org/{BORNMANN}"), ("R. Mutz", "0000-0002-1694-233x")
    )
    cfg = lab_config(tmp_path, text)
    assert cfg.lab == LabConfig(
        "Scientometrics", ROR, (LabMember("Lutz Bornmann", BORNMANN), LabMember("R. Mutz", MUTZ))
    )
    assert cfg.lab.declared and not load_config(None, env={}).lab.declared


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (members_toml(("A B", "0000-0002-1825-0098")), "[lab] members #1 orcid must be an ORCID"),
        (members_toml(("A B", "1825-0097")), "[lab] members #1 orcid must be an ORCID"),
        (
            members_toml(("A B", BORNMANN), ("C D", BORNMANN)),
            "#2 orcid 0000-0002-1825-0097 is declared twice",
        ),
        (members_toml((" ", BORNMANN)), "[lab] members #1 name must be a non-empty string"),
        ('[[lab.members]]\nname = "A B"\n', "#1 must have exactly name and orcid"),
        ('[[lab.members]]\nname = "A B"\norcid = "x"\nrole = "PI"\n', "exactly name and orcid"),
        ('[lab]\nmembers = "Lutz Bornmann"\n', "[lab] members must be an array of tables"),
        ('[lab]\nror = "03acrzv42"\n', "[lab] ror must be a ROR id"),
        ('[lab]\nror = "grid.1234.5"\n', "[lab] ror must be a ROR id"),
        ('[lab]\nror = "03acr\u017fv41"\n', "[lab] ror must be a ROR id"),  # a long s
        ('[lab]\nhead = "x"\n', "unknown key [lab] head"),
    ],
)
def test_bad_lab_config_is_one_line_naming_it(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        lab_config(tmp_path, text)
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_lab_members_from_the_environment(tmp_path: Path) -> None:
    make_config(tmp_path)
    path = tmp_path / "config.toml"
    path.write_text(path.read_text() + members_toml(("Lutz Bornmann", BORNMANN)))
    env = {"PAPERSIFT_LAB_MEMBERS": json.dumps([{"name": "Rüdiger Mutz", "orcid": MUTZ}])}
    assert load_config(path, env=env).lab.members == (LabMember("Rüdiger Mutz", MUTZ),)
    assert load_config(path, env={"PAPERSIFT_LAB_MEMBERS": "[]"}).lab.members == ()
    with pytest.raises(ConfigError, match="PAPERSIFT_LAB_MEMBERS must be a JSON array"):
        load_config(path, env={"PAPERSIFT_LAB_MEMBERS": "Lutz Bornmann"})
    with pytest.raises(ConfigError, match="PAPERSIFT_LAB_MEMBERS #1 orcid"):
        load_config(path, env={"PAPERSIFT_LAB_MEMBERS": '[{"name": "A B", "orcid": "1"}]'})


# -- anchoring (pure) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def papers() -> dict[str, Paper]:
    wanted = {"1101.3863", "1007.4749", "1906.11405"}
    return {r["id"]: record_to_paper(r) for r in demo_records() if r["id"] in wanted}


def renamed(p: Paper, old: str, new: str, ids: tuple[tuple[str, str], ...] = ()) -> Paper:
    (author,) = parse_authors(new)
    authors = tuple(replace(author, ids=ids) if a.name == old else a for a in p.authors)
    assert authors != p.authors
    return replace(p, authors=authors)


def at_lab(p: Paper, position: int) -> Paper:
    """The paper as enrichment leaves it when an author is affiliated with the lab's ROR."""
    extra = (("affiliations", json.dumps([[position, ROR, "The lab's university"]])),)
    return replace(p, extra=extra)


def names(p: Paper, anchored: dict[int, tuple[tuple[str, str], ...]]) -> dict[str, str]:
    return {p.authors[pos].name: dict(ids)["orcid"] for pos, ids in anchored.items()}


LAB = LabConfig("Lab", ROR, (LabMember("Lutz Bornmann", BORNMANN), LabMember("R. Mutz", MUTZ)))


def test_exact_full_name_anchors(papers: dict[str, Paper]) -> None:
    p = papers["1007.4749"]  # Lutz Bornmann and a co-author who is not a member
    assert names(p, anchor_ids(LAB, p)) == {"Lutz Bornmann": BORNMANN}


def test_initials_need_evidence(papers: dict[str, Paper]) -> None:
    # "Rüdiger Mutz" fits the member "R. Mutz"; Lutz Bornmann, a member, is a co-author.
    p = papers["1101.3863"]
    assert names(p, anchor_ids(LAB, p)) == {"Lutz Bornmann": BORNMANN, "Rüdiger Mutz": MUTZ}
    # Alone, a compatible name is not enough ...
    alone = LabConfig("Lab", ROR, (LabMember("R. Mutz", MUTZ),))
    assert anchor_ids(alone, p) == {}
    # ... the lab's institution among the paper's affiliations is.
    assert names(p, anchor_ids(alone, at_lab(p, 0))) == {"Rüdiger Mutz": MUTZ}
    # So is the same spelled-out name.
    spelled = LabConfig("Lab", "", (LabMember("Mutz, Rüdiger", MUTZ),))
    assert names(p, anchor_ids(spelled, p)) == {"Rüdiger Mutz": MUTZ}


def test_conflicts_and_ambiguity_anchor_nothing(papers: dict[str, Paper]) -> None:
    p = papers["1007.4749"]
    # The authorship has another ORCID (from enrichment): a namesake, kept apart.
    other = renamed(p, "Lutz Bornmann", "Lutz Bornmann", (("orcid", OTHER),))
    assert anchor_ids(LAB, other) == {}
    # Its own ORCID already: nothing to add.
    same = renamed(p, "Lutz Bornmann", "Lutz Bornmann", (("orcid", BORNMANN),))
    assert anchor_ids(LAB, same) == {}
    # Two members the name fits: which one is unknowable.
    two = LabConfig(
        "Lab", ROR, (LabMember("Lutz Bornmann", BORNMANN), LabMember("L. Bornmann", OTHER))
    )
    assert anchor_ids(two, at_lab(p, 0)) == {}
    # One member, two fitting authors on one paper ("Ayush Garg" is on 1906.11405 twice).
    twice = at_lab(papers["1906.11405"], 0)
    assert anchor_ids(LabConfig("Lab", ROR, (LabMember("Ayush Garg", MUTZ),)), twice) == {}


def test_a_surname_alone_anchors_nothing(papers: dict[str, Paper]) -> None:
    p = papers["1007.4749"]
    assert anchor_ids(LabConfig("Lab", "", (LabMember("Bornmann", BORNMANN),)), p) == {}
    initial = renamed(p, "Lutz Bornmann", "Bornmann")
    assert anchor_ids(LAB, at_lab(initial, 0)) == {}


# -- the home page -------------------------------------------------------------------------

HOME_IDS = ("1007.4749", "1101.3863", "1211.0381", "1307.0667", "2401.10241", "cmp-lg/9405001")
NCWU = "North China University of Water Resources and Electric Power"  # what ROR names 03acrzv41


def _with_orcid(p: Paper, name: str, orcid: str) -> Paper:
    """As enrichment leaves a paper whose author ``name`` has an ORCID."""
    return renamed(p, name, name, (("orcid", orcid),))


def _home_site(root: Path, lab: str, papers: list[Paper]) -> tuple[TestClient, SearchEngine]:
    config = lab_config(root, lab)
    data = DataDir(config)
    data.store.upsert(papers)
    data.sync_lexical()
    refresh_people(data)
    engine = SearchEngine(data)
    engine.institutions.import_organisations(
        [Organisation(ROR, NCWU, (), ("NCWU",), "CN", "Zhengzhou", ("education",), "active")]
    )
    return TestClient(create_app(engine, config)), engine


@pytest.fixture
def home_papers() -> list[Paper]:
    found = {r["id"]: record_to_paper(r) for r in demo_records() if r["id"] in HOME_IDS}
    found["1007.4749"] = _with_orcid(found["1007.4749"], "Lutz Bornmann", BORNMANN)
    found["1101.3863"] = _with_orcid(found["1101.3863"], "Rüdiger Mutz", MUTZ)
    return list(found.values())


def test_home_shows_this_lab(tmp_path: Path, home_papers: list[Paper]) -> None:
    lab = '[lab]\nname = "Bornmann & Mutz <Lab>"\nror = "03acrzv41"\n' + members_toml(
        ("Lutz Bornmann", BORNMANN), ("Rüdiger Mutz", MUTZ), ("Josiah Carberry", OTHER)
    )
    client, engine = _home_site(tmp_path, lab, home_papers)
    with client:
        doc = page(client, "/")
        (section,) = doc.cssselect("section.lab")
        (title,) = section.cssselect("h2")
        assert title.text_content() == "Bornmann & Mutz <Lab>"  # escaped text, not markup
        (link,) = title.cssselect("a")
        inst = page(client, link.get("href"))
        assert NCWU in inst.findtext(".//h1")
        members = {
            li.text_content().replace(li.cssselect(".count")[0].text_content(), "").strip(): li
            for li in section.cssselect(".lab-members li")
        }
        assert list(members) == ["Lutz Bornmann", "Rüdiger Mutz", "Josiah Carberry"]

        def by(*keys: str) -> list[Paper]:
            return [p for p in home_papers if any(a.key in keys for a in p.authors)]

        counts = {n: li.cssselect(".count")[0].text_content() for n, li in members.items()}
        assert counts == {
            "Lutz Bornmann": f"{len(by('lutz bornmann'))} papers",
            "Rüdiger Mutz": f"{len(by('rudiger mutz', 'ruediger mutz'))} papers",  # joined
            "Josiah Carberry": "no papers linked",  # not "0 papers": none were anchored
        }
        person = page(client, members["Lutz Bornmann"].cssselect("a")[0].get("href"))
        assert person.findtext(".//h1").strip() == "Lutz Bornmann"
        assert not members["Josiah Carberry"].cssselect("a")  # no papers here: no page
        # The latest papers by any member, newest first, and the full search.
        theirs = by("lutz bornmann", "rudiger mutz", "ruediger mutz")
        newest = sorted(theirs, key=lambda p: p.published, reverse=True)[:5]
        assert hit_ids(section) == [p.arxiv_id for p in newest]
        (more,) = section.cssselect("a.lab-search")
        assert set(hit_ids(page(client, more.get("href")))) == {p.arxiv_id for p in theirs}
        # JSON-LD: the lab as an Organization with its members.
        org = ld_of(doc, "Organization")
        assert org["name"] == "Bornmann & Mutz <Lab>"
        assert org["parentOrganization"]["name"] == NCWU
        assert [m["identifier"] for m in org["member"]] == [
            f"https://orcid.org/{o}" for o in (BORNMANN, MUTZ, OTHER)
        ]
        assert "<Lab>" not in "".join(doc.xpath('//script[@type="application/ld+json"]/text()'))
    engine.close()


def test_no_lab_no_section(tmp_path: Path, home_papers: list[Paper]) -> None:
    client, engine = _home_site(tmp_path, "", home_papers)
    with client:
        doc = page(client, "/")
        assert not doc.cssselect("section.lab")
        assert all(d["@type"] != "Organization" for d in jsonld(doc))
    engine.close()


# -- anchoring through identities ----------------------------------------------------------


def test_declaring_the_lab_anchors_papers_already_in_the_store(tmp_path: Path) -> None:
    wanted = ("1007.4749", "1101.3863", "1103.3216", "1102.3862", "1104.0807")
    p = {r["id"]: record_to_paper(r) for r in demo_records() if r["id"] in wanted}
    # As enrichment could leave them: a namesake with another ORCID, and an initials-only
    # spelling (with a co-author no other paper shares) affiliated with the lab's ROR id.
    p["1102.3862"] = _with_orcid(p["1102.3862"], "Lutz Bornmann", OTHER)
    p["1104.0807"] = at_lab(renamed(p["1104.0807"], "Lutz Bornmann", "L. Bornmann"), 0)
    plain = ("1007.4749", "1101.3863", "1103.3216")
    member = members_toml(("Bornmann, Lutz", BORNMANN))

    def state(lab: str) -> tuple[dict[str, int], dict[int, tuple[tuple[str, str], ...]]]:
        """Each paper's Bornmann researcher, and each researcher's ids, after opening the
        data directory with this lab declaration (which refreshes identities)."""
        config = lab_config(tmp_path, lab)
        data = DataDir(config)
        refresh_people(data)
        rids = {}
        for arxiv_id, paper in p.items():
            (pos,) = [i for i, a in enumerate(paper.authors) if "bornmann" in a.key]
            rid = data.people.author_rids(arxiv_id)[pos]
            assert rid is not None
            rids[arxiv_id] = rid
        people = {r: data.people.get(r) for r in set(rids.values())}
        engine = SearchEngine(data)
        for rid in people:  # the researcher filter follows the new ids
            hits = engine.search(SearchRequest(filters=Filters(researcher_ids=(rid,)))).hits
            assert {h.paper.arxiv_id for h in hits} == {i for i, r in rids.items() if r == rid}
        section = lab_section(engine, config.lab, 5, 1000)
        if section is not None and section.members:  # the home page finds the member by ORCID
            (shown,) = section.members
            mine = [i for i, r in rids.items() if r == rids["1007.4749"]]
            assert shown.papers == len(mine) and shown.url
            assert shown.url.startswith(f"/researchers/{rids['1007.4749']}-")
            assert {h.paper.arxiv_id for h in section.latest} == set(mine)
        engine.close()
        return rids, {r: person.ids for r, person in people.items() if person}

    data = DataDir(lab_config(tmp_path, ""))
    data.store.upsert(p.values())
    data.sync_lexical()
    refresh_people(data)
    data.close()
    # No lab: the same full name joins the namesake's ORCID; the initials stay apart.
    rids, ids = state("")
    assert len({rids[i] for i in (*plain, "1102.3862")}) == 1
    assert ids[rids["1007.4749"]] == (("orcid", OTHER),)
    assert rids["1104.0807"] != rids["1007.4749"]
    # Declared: the member's papers carry the member's ORCID; the namesake is split off;
    # the initials-only spelling has no evidence yet.
    rids, ids = state(f'[lab]\nname = "Lab"\n{member}')
    assert len({rids[i] for i in plain}) == 1
    assert ids[rids["1007.4749"]] == (("orcid", BORNMANN),)
    assert rids["1102.3862"] != rids["1007.4749"] and ids[rids["1102.3862"]] == (("orcid", OTHER),)
    assert rids["1104.0807"] != rids["1007.4749"]
    # The lab's ROR id is evidence: the affiliated "L. Bornmann" joins the member.
    rids, ids = state(f'[lab]\nname = "Lab"\nror = "{ROR}"\n{member}')
    assert rids["1104.0807"] == rids["1007.4749"]
    # Undeclared again: back to the identities without the lab.
    rids, ids = state("")
    assert len({rids[i] for i in (*plain, "1102.3862")}) == 1
    assert rids["1104.0807"] != rids["1007.4749"]
    assert all(("orcid", BORNMANN) not in v for v in ids.values())
