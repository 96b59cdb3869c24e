"""Researcher identity on real demo papers: name matching, clustering, stable ids."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from papersift.core.authors import parse_authors
from papersift.core.config import Config
from papersift.core.names import compatible, compound_given, split_name
from papersift.core.paper import Author, Paper
from papersift.engine.datadir import DataDir
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.build import import_files
from papersift.indexer.identity import Row, cluster
from papersift.indexer.identity_refresh import IDENTITY_RULES, RULES_KEY, refresh_people
from papersift.indexer.snapshot import record_to_paper
from tests.corpus import demo_records, write_jsonl

# Papers whose authors exercise the rules (all real, from the demo corpus).
IDS = (
    "0903.3562", "1503.03287", "1702.01090",  # Katy Boerner / Borner / Börner, Scharnhorst
    "1101.3863", "1211.0381", "1307.0667",  # Rüdiger / Ruediger Mutz with Lutz Bornmann
    "0907.4740", "1412.2716", "1706.04188",  # Paul Ginsparg; "P. Ginsparg" alone
    "1206.3664", "1504.02261",  # Stevan Harnad / S. Harnad, Yassine Gargouri / Y. Gargouri
    "0909.4786", "0909.4789", "1406.4542",  # Kurtz, Eichhorn, Carolyn (S.) Grant
    "1906.11405",  # "Ayush Garg" twice on one paper
)  # fmt: skip


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    wanted = set(IDS)
    found = [r for r in demo_records() if r["id"] in wanted]
    assert {r["id"] for r in found} == wanted
    return found


def _key(raw: str) -> str:
    (author,) = parse_authors(raw)
    return author.key


@pytest.mark.parametrize(
    ("a", "b", "same_block", "compat"),
    [
        ("Katy Börner", "Katy Boerner", True, True),  # umlaut written out, in the surname
        ("Rüdiger Mutz", "Ruediger Mutz", True, True),  # ... and in the given name
        (r"Bal\'azs K\'egl", "Balázs Kégl", True, True),  # TeX accents meet Unicode
        ("P. Ginsparg", "Paul Ginsparg", True, True),  # an initial: compatible, needs evidence
        ("Carolyn S. Grant", "Carolyn Grant", True, True),  # a missing middle name
        ("Vicente P. Guerrero-Bote", "Vicente Guerrero-Bote", True, True),
        ("Felix de Moya Anegon", "Felix Moya Anegon", True, True),  # particle
        ("Carolyn S. Grant", "Christan Grant", True, False),  # different first names
        ("Xinyue Guo", "Xinyu Guo", True, False),  # pinyin "ue" is no umlaut
        ("Juechen Li", "Juchen Li", True, False),  # ... after j neither ("jue" + "chen")
        ("Juergen Schmidhuber", "Jürgen Schmidhuber", True, True),  # but "rg" is no pinyin
        ("Xiao Xue", "Xiao Xu", False, False),  # nor in a surname
        ("Le Li", "Da Li", False, False),  # a first name is never a particle
        ("John Smith Jr.", "John Smith Sr.", True, False),  # suffixes that differ
        ("Stephen S. Murray", "Steven S. Murray", True, False),
    ],
)
def test_name_rules_on_real_spellings(a: str, b: str, same_block: bool, compat: bool) -> None:
    pa, pb = split_name(_key(a)), split_name(_key(b))
    assert (pa.block == pb.block) is same_block
    assert compatible(pa, pb) is compat


def test_collaborations_are_their_own_kind() -> None:
    parts = split_name(_key("The ATLAS Collaboration"))
    assert parts.collective and parts.key == "atlas collaboration"
    assert not compatible(parts, split_name(_key("A. Atlas")))


def _rid(data: DataDir, arxiv_id: str, name: str) -> int:
    paper = data.store.get([data.store.docid_of(arxiv_id) or -1])
    (p,) = paper.values()
    rids = data.people.author_rids(arxiv_id)
    (rid,) = [r for a, r in zip(p.authors, rids, strict=True) if a.name == name]
    assert rid is not None
    return rid


def test_clustering_joins_with_evidence_only(
    fresh_config: Config, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", records)])
    refresh_people(data)
    r = lambda i, n: _rid(data, i, n)  # noqa: E731
    # Spelling variants with a shared co-author meet.
    assert r("0903.3562", "Katy Boerner") == r("1503.03287", "Katy Borner")
    assert r("0903.3562", "Katy Boerner") == r("1702.01090", "Katy Börner")
    assert r("1101.3863", "Rüdiger Mutz") == r("1211.0381", "Ruediger Mutz")
    assert r("1206.3664", "Stevan Harnad") == r("1504.02261", "S. Harnad")
    assert r("1206.3664", "Yassine Gargouri") == r("1504.02261", "Y. Gargouri")
    assert r("0909.4786", "Carolyn Grant") == r("0909.4789", "Carolyn S. Grant")
    # The same full name meets without more evidence.
    assert r("0907.4740", "Paul Ginsparg") == r("1412.2716", "Paul Ginsparg")
    # A solo paper by "P. Ginsparg": nothing links it, so it stays apart, with a reason.
    solo = r("1706.04188", "P. Ginsparg")
    paul = r("0907.4740", "Paul Ginsparg")
    assert solo != paul
    person = data.people.get(paul)
    assert person is not None and person.papers == 2
    notes = {s.researcher.rid: s.reason for s in data.people.same_name(person)}
    assert "no shared co-author" in notes[solo]
    # One name twice on one paper: two people.
    garg = data.people.author_rids("1906.11405")
    assert garg[1] != garg[2]
    data.close()


def test_orcid_splits_and_joins(fresh_config: Config, records: list[dict[str, Any]]) -> None:
    papers = {r["id"]: record_to_paper(r) for r in records}

    def with_orcid(p: Paper, name: str, orcid: str) -> Paper:
        authors = tuple(
            replace(a, ids=(("orcid", orcid),)) if a.name == name else a for a in p.authors
        )
        return replace(p, authors=authors)

    a = "0000-0001-0000-0001"
    b = "0000-0002-0000-0002"
    edited = [
        with_orcid(papers["0907.4740"], "Paul Ginsparg", a),
        with_orcid(papers["1412.2716"], "Paul Ginsparg", b),  # same name, another ORCID
        with_orcid(papers["1706.04188"], "P. Ginsparg", a),  # joined by the id alone
    ]
    data = DataDir(fresh_config)
    data.store.upsert(edited)
    refresh_people(data)
    rids = {p.arxiv_id: data.people.author_rids(p.arxiv_id) for p in edited}
    first, second, solo = rids["0907.4740"][1], rids["1412.2716"][1], rids["1706.04188"][0]
    assert first == solo != second
    person = data.people.get(first)
    assert person is not None and person.ids == (("orcid", a),)
    notes = {s.researcher.rid: s.reason for s in data.people.same_name(person)}
    assert notes[second] == "different ORCID ids"
    data.close()


def test_ids_survive_reimport_updates_and_reindexing(
    fresh_config: Config, tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    data = DataDir(fresh_config)
    half = [r for r in records if r["id"] != "1504.02261"]
    import_files(data, [write_jsonl(tmp_path / "a.jsonl", half)])
    refresh_people(data)
    before = {r["id"]: data.people.author_rids(r["id"]) for r in half}
    # The same file again: nothing moves, nothing is re-indexed.
    seq = data.store.seq
    import_files(data, [write_jsonl(tmp_path / "b.jsonl", half)])
    assert data.store.seq == seq
    # More papers (one links "S. Harnad" to Stevan Harnad) and a new version with the
    # author order reversed: every old id still leads to the same person.
    changed = dict(next(r for r in half if r["id"] == "1206.3664"))
    changed["versions"] = [*changed["versions"], {"version": "v9", "created": ""}]
    changed["authors"] = ", ".join(reversed(changed["authors"].split(", ")))
    changed.pop("authors_parsed", None)
    rest = [r for r in records if r["id"] == "1504.02261"]
    import_files(data, [write_jsonl(tmp_path / "c.jsonl", [*rest, changed])])
    refresh_people(data)
    for arxiv_id, rids in before.items():
        now = data.people.author_rids(arxiv_id)
        assert sorted(r for r in now if r) == sorted(r for r in rids if r), arxiv_id
    harnad = _rid(data, "1206.3664", "Stevan Harnad")
    assert harnad == _rid(data, "1504.02261", "S. Harnad")
    # Rebuild the lexical index from the store: the researcher filter still finds them.
    data.close()
    shutil.rmtree(fresh_config.data_dir / "lexical")
    data = DataDir(fresh_config)
    data.store.set_meta("lexical_seq", "0")
    data.sync_lexical()
    engine = SearchEngine(data)
    result = engine.search(SearchRequest(filters=Filters(researcher_ids=(harnad,))))
    assert {h.paper.arxiv_id for h in result.hits} == {"1206.3664", "1504.02261"}
    facet = {f.value: f.count for f in result.facets["researchers"]}
    assert facet[str(harnad)] == 2
    # Ids are never reused: a deleted paper's researcher keeps its number retired.
    top = max(r for rids in before.values() for r in rids if r)
    data.store.delete(["1906.11405"])
    refresh_people(data)
    data.store.upsert([_paper_by("Zeynep Newperson")])
    refresh_people(data)
    (new,) = data.people.author_rids("2401.99999")
    assert new is not None and new > top
    engine.close()


def _paper_by(name: str) -> Paper:
    p = record_to_paper(demo_records()[0])
    key = parse_authors(name)[0].key
    return replace(p, arxiv_id="2401.99999", authors=(Author(name, key),))


def test_indexed_spellings_equal_the_pairwise_comparison() -> None:
    """The block's spelling index (issue 24) finds exactly the compatible pairs that
    comparing every pair finds, on names with initials, particles, umlauts and suffixes."""
    import random

    from papersift.indexer.identity import _keys_compatible, _spellings

    given = ["j", "john", "j a", "john a", "jon", "guenther", "gunther", "j b", "", "a j",
             "james", "j de", "john de la", "xinyue", "xinyu", "k", "m n", "m"]  # fmt: skip
    surnames = ["smith", "smith jr", "smith sr", "smith ii"]
    rng = random.Random(24)
    for _ in range(30):
        keys = {f"{rng.choice(given)} {rng.choice(surnames)}".strip() for _ in range(25)}
        keys |= {"the atlas collaboration"}
        brute = {k: {k2 for k2 in keys if _keys_compatible(k, k2)} for k in keys}
        assert {k: set(v) for k, v in _spellings(keys).items()} == brute


ALG_GEOM = Path(__file__).parent / "fixtures" / "snapshot" / "alg-geom-1990s.jsonl"


def test_initials_sharing_a_coauthor_on_many_papers_join(fresh_config: Config) -> None:
    """Real 1990s records: four papers of "J. M. F. Labastida, M. Mariño" are one
    Labastida and one Mariño, not four each (every unit had three candidates, all of one
    spelling, and called that ambiguous); "M. Kontsevich" twice with "Yu. Manin" joins
    "Maxim Kontsevich" with "Yuri I. Manin". Without a shared co-author one initial stays
    apart; two or more join where the block is rare and shows one person."""
    data = DataDir(fresh_config)
    import_files(data, [ALG_GEOM])
    refresh_people(data)
    r = lambda i, n: _rid(data, i, n)  # noqa: E731
    joint = ("hep-th/9504010", "hep-th/9507140", "hep-th/9603169", "hep-th/9702054")
    assert len({r(i, "J. M. F. Labastida") for i in joint}) == 1
    marino = {r(i, n) for i, n in zip(joint, ["M. Mariño"] * 3 + ["M. Marino"], strict=True)}
    assert len(marino) == 1
    labastida = r(joint[0], "J. M. F. Labastida")
    # Alone on a paper, or with Carlos Lozano only: no co-author, but three initials in a
    # block that shows one person on few papers (rule 2).
    assert r("hep-th/9511037", "J. M. F. Labastida") == labastida
    assert r("hep-th/9709192", "J. M. F. Labastida") == labastida
    maxim = r("alg-geom/9708024", "Maxim Kontsevich")
    assert r("hep-th/9402147", "M. Kontsevich") == r("q-alg/9502009", "M. Kontsevich") == maxim
    solo = {r(i, "R. Pandharipande") for i in ("alg-geom/9502020", "alg-geom/9504004")}
    assert len(solo) == 2  # identical initials, no evidence: still two researchers
    data.close()


def _block(*papers: list[str]) -> tuple[list[Row], dict[int, set[str]]]:
    """The rows of the name block "zhang y" (docids from 1) and each paper's co-author
    blocks, as ``indexer.identity_refresh`` reads them."""
    return _block_of("zhang y", *papers)


def _block_of(block: str, *papers: list[str]) -> tuple[list[Row], dict[int, set[str]]]:
    rows, coauthors = [], {}
    for docid, names in enumerate(papers, start=1):
        authors = parse_authors(", ".join(names))
        coauthors[docid] = {split_name(a.key).block for a in authors} - {block}
        for pos, a in enumerate(authors):
            if split_name(a.key).block == block:
                rows.append(Row(docid, pos, len(names), a.name, a.key, frozenset(), None, True))
    return rows, coauthors


def test_several_candidates_join_only_where_the_block_shows_one_person() -> None:
    """Three "Y. Zhang" with co-author "Y. Wang" are one person while nothing in the block
    says otherwise; once "Yi Zhang" and "Yu Zhang" (two people) are in it, or two of its
    names share a paper, three of one spelling may be two people: none join."""
    three = [["Y. Zhang", "Y. Wang"]] * 3
    (one,) = cluster(*_block(*three))
    assert len(one.docids) == 3
    crowded = cluster(*_block(*three, ["Yi Zhang", "Q. Li"], ["Yu Zhang", "H. Chen"]))
    assert sorted(len(u.docids) for u in crowded) == [1, 1, 1, 1, 1]
    shared = cluster(*_block(*three, ["Y. Zhang", "Y. Zhang"]))  # two on one paper
    assert sorted(len(u.docids) for u in shared) == [1, 1, 1, 1, 1]


def test_tables_clustered_by_other_rules_are_clustered_again(fresh_config: Config) -> None:
    """An upgrade whose identity rules differ re-reads every paper's authors once (so the
    identities already there are mended, not only those of papers changed after it), with
    the ids kept; a fresh directory records the rules without a second pass."""
    data = DataDir(fresh_config)
    try:
        import_files(data, [ALG_GEOM])
        first = refresh_people(data)
        store = data.store
        assert store.get_meta(RULES_KEY) == IDENTITY_RULES
        assert refresh_people(data).papers == 0  # nothing pending: no second pass
        with store.reading() as db:
            before = db.execute("SELECT docid, position, rid FROM authorships").fetchall()
        listed = data.people.search("labastida")
        store.set_meta(RULES_KEY, "1")  # as clustered by the rules before
        assert data.people_pending() == 0
        again = refresh_people(data)
        assert again.papers == store.count() == first.papers
        assert store.get_meta(RULES_KEY) == IDENTITY_RULES
        with store.reading() as db:
            after = db.execute("SELECT docid, position, rid FROM authorships").fetchall()
        assert sorted(after) == sorted(before)  # the same clusters keep their ids
        assert data.people.search("labastida") == listed  # the directory as it was
        assert refresh_people(data).papers == 0
    finally:
        data.close()


def test_a_researcher_is_named_by_the_spelling_most_papers_use(
    fresh_config: Config, tmp_path: Path
) -> None:
    """Real demo papers: "Lyudmila L. Balakireva" (once, on 1003.3661) joins "Lyudmila
    Balakireva" of three papers through Herbert Van de Sompel; the page is "Lyudmila
    Balakireva", the spelling most of them use, not the more specific one seen once
    (review 35: "Wei-Ning Zhang" on one paper labelled 336 papers of "Wei Zhang")."""
    ids = {"1003.3661", "1606.09136", "1804.01603", "cs/0503016"}
    found = [r for r in demo_records() if r["id"] in ids]
    data = DataDir(fresh_config)
    try:
        import_files(data, [write_jsonl(tmp_path / "a.jsonl", found)])
        refresh_people(data)
        person = data.people.get(_rid(data, "1003.3661", "Lyudmila L. Balakireva"))
        assert person is not None and person.papers == 4
        assert person.name == "Lyudmila Balakireva"
    finally:
        data.close()


def test_a_common_name_needs_two_shared_coauthors() -> None:
    """ "Yi Zhang" on 100 papers of a block with 150 other first names is many people:
    papers with the same two co-authors join (two groups here); one co-author in common,
    or two of the same surnames and initials ("Qiang Li", "Hao Chen" against "Qing Li",
    "Hui Chen"), is not enough. The same name in a quiet block is one person."""
    others = [f"Y{a}{b} Zhang" for a in "abcdefghijklm" for b in "nopqrstuvwxyz"][:150]
    group_a = [["Yi Zhang", "Qiang Li", "Hao Chen"]] * 50
    group_b = [["Yi Zhang", "Rui Sun", "Tao Ma"]] * 48
    loose_ends = [["Yi Zhang", "Qing Li", "Hui Chen"], ["Yi Zhang", "Qiang Li", "Xin Wu"]]
    crowd = [[n, "Kin Wong"] for n in others]
    papers = [*group_a, *group_b, *loose_ends, *crowd]
    names = {d: {parse_authors(n)[0].key for n in p} for d, p in enumerate(papers, start=1)}
    units = cluster(*_block(*papers), names)
    yi = sorted((len(u.docids) for u in units if "yi zhang" in u.parts), reverse=True)
    assert yi == [50, 48, 1, 1]
    (quiet,) = cluster(*_block(*group_a, *group_b, *loose_ends))
    assert len(quiet.docids) == 100


def test_a_hyphenated_first_name_is_one_name() -> None:
    """ "Wei-Ning Zhang" is not "Wei Zhang" (nor "J.-P. Serre" "Jean Serre"), however much
    evidence; it is "Wei Ning Zhang", "Wei N. Zhang" and "W. Zhang"."""
    assert compound_given("Wei-Ning Zhang") and compound_given("J. -B. Maillet")
    assert not compound_given("Vicente P. Guerrero-Bote")
    hyphen = replace(split_name(_key("Wei-Ning Zhang")), compound=True)
    near = {"Wei Zhang": False, "Wei Ming Zhang": False, "Wei Ning Zhang": True}
    for other, compat in {**near, "Wei N. Zhang": True, "W. Zhang": True}.items():
        assert compatible(hyphen, split_name(_key(other))) is compat, other
        assert compatible(split_name(_key(other)), hyphen) is compat, other
    serre = replace(split_name(_key("J.-P. Serre")), compound=True)
    assert not compatible(serre, split_name(_key("Jean Serre")))
    # On papers: two shared co-authors do not join "Wei Zhang" and "Wei-Ning Zhang".
    rows, coauthors = _block_of(
        "zhang w", ["Wei Zhang", "Jun Liu", "Pei Ru"], ["Wei-Ning Zhang", "Jun Liu", "Pei Ru"]
    )
    assert sorted(len(u.docids) for u in cluster(rows, coauthors)) == [1, 1]


def test_two_initials_in_a_rare_block_are_one_person() -> None:
    """Five solo papers of "S. W. Hawking" (663k papers: five researchers) are one person
    in a block of few authorships that shows one person; not where the block also has
    "Simon Hawking" (two people), nor with many authorships; one initial ("S. Hawking")
    still needs a co-author."""
    solo = [["S. W. Hawking"]] * 5
    units = cluster(*_block_of("hawking s", *solo, ["Stephen Hawking", "G. W. Gibbons"]))
    assert sorted(len(u.docids) for u in units) == [1, 5]
    two = cluster(*_block_of("hawking s", *solo, ["Simon Hawking"], ["Stephen Hawking"]))
    assert sorted(len(u.docids) for u in two) == [1] * 7
    many = cluster(*_block_of("hawking s", *solo, *[["Stephen Hawking"]] * 50))
    assert sorted(len(u.docids) for u in many) == [1, 1, 1, 1, 1, 50]
    one = cluster(*_block_of("hawking s", *[["S. Hawking"]] * 5))
    assert len(one) == 5


def test_pages_say_why_a_common_name_and_a_hyphenated_one_are_apart(
    fresh_config: Config,
) -> None:
    """Through the store: two groups of "Yi Zhang" papers in a crowded block are two
    researchers, each told the other is "a common name" (not "same initials only"); "Wei-Ning
    Zhang" is told "Wei Zhang" has different given names, though they share co-authors."""
    base = record_to_paper(demo_records()[0])
    others = [f"Y{a}{b} Zhang" for a in "abcdefghijklm" for b in "nopqrstuvwxyz"][:150]
    papers = [
        *[["Yi Zhang", "Qiang Li", "Hao Chen"]] * 50,
        *[["Yi Zhang", "Rui Sun", "Tao Ma"]] * 50,
        *[[n, "Kin Wong"] for n in others],
        ["Wei-Ning Zhang", "Jun Liu", "Pei Ru"],
        ["Wei Zhang", "Jun Liu", "Pei Ru"],
    ]
    edited = [
        replace(base, arxiv_id=f"2401.{i:05d}", authors=parse_authors(", ".join(names)))
        for i, names in enumerate(papers, start=1)
    ]
    data = DataDir(fresh_config)
    try:
        data.store.upsert(edited)
        refresh_people(data)
        first, second = (data.people.author_rids(f"2401.{i:05d}")[0] for i in (1, 51))
        assert first is not None and second is not None and first != second
        person = data.people.get(first)
        assert person is not None and person.papers == 50
        notes = {s.researcher.rid: s.reason for s in data.people.same_name(person)}
        assert notes[second].startswith("a common name")
        hyphen = data.people.get(data.people.author_rids("2401.00251")[0] or -1)
        assert hyphen is not None and hyphen.name == "Wei-Ning Zhang"
        plain = data.people.author_rids("2401.00252")[0]
        notes = {s.researcher.rid: s.reason for s in data.people.same_name(hyphen)}
        assert notes[plain] == "different given names"
    finally:
        data.close()
