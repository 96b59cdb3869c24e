"""Author splitting and name normalisation, on real author strings from arXiv dumps."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from papersift.core import authors
from papersift.core.authors import is_affiliation, normalise_name, parse_authors
from papersift.core.resources import demo_corpus_path

KAGGLE_HEAD = Path(__file__).parent / "fixtures" / "snapshot" / "kaggle-head200.jsonl"


def names(raw: str, parsed: list[list[str]] | None = None) -> list[str]:
    return [a.name for a in parse_authors(raw, parsed)]


# (raw authors field, expected display names).  "K:" marks strings from the Kaggle head
# (arxiv-metadata-oai-snapshot.head200.jsonl), "B:" from arxiv-snapshot-bench.jsonl.xz;
# the rest are written for the case.
CASES: list[tuple[str, list[str]]] = [
    # K: 0704.0001 - TeX accent, hyphenated initials
    (
        "C. Bal\\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan",
        ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"],
    ),
    # K: 0704.0007 - "and" before the last author
    (
        "Alejandro Corichi, Tatjana Vukasinac and Jose A. Zapata",
        ["Alejandro Corichi", "Tatjana Vukasinac", "Jose A. Zapata"],
    ),
    # K: 0704.0024 - ", and"
    (
        "A.A. Serga, M. Kostylev, and B. Hillebrands",
        ["A.A. Serga", "M. Kostylev", "B. Hillebrands"],
    ),
    # K: 0704.0009 - line break inside a name, suffix II
    (
        "Paul Harvey, Bruno Merin, Tracy L. Huard, Luisa M. Rebull, Nicholas\n  Chapman, "
        "Neal J. Evans II, Philip C. Myers",
        [
            "Paul Harvey",
            "Bruno Merin",
            "Tracy L. Huard",
            "Luisa M. Rebull",
            "Nicholas Chapman",
            "Neal J. Evans II",
            "Philip C. Myers",
        ],
    ),
    # K: 0704.0020 - collaboration and "et al"
    ("The BABAR Collaboration, B. Aubert, et al", ["The BABAR Collaboration", "B. Aubert"]),
    # K: 0704.0171
    ("F. Aharonian, et al", ["F. Aharonian"]),
    # K: 0704.0025 - numbered, nested affiliations containing "and" and commas
    (
        "A. S. Mishchenko (1 and 2) and N. Nagaosa (1 and 3) ((1) CREST, Japan\n  Science and "
        "Technology Agency, (2) Russian Research Centre ``Kurchatov\n  Institute'', (3) The "
        "University of Tokyo)",
        ["A. S. Mishchenko", "N. Nagaosa"],
    ),
    # K: 0704.0155 - affiliations after each name, one shared by two
    (
        "Floris van der Tak (SRON Groningen), John Black (Onsala), Fredrik\n  Schoeier "
        "(Stockholm), David Jansen and Ewine van Dishoeck (Leiden)",
        [
            "Floris van der Tak",
            "John Black",
            "Fredrik Schoeier",
            "David Jansen",
            "Ewine van Dishoeck",
        ],
    ),
    # K: 0704.0062 - \v{S}, \'a
    (
        "Rastislav \\v{S}r\\'amek, Bro\\v{n}a Brejov\\'a, Tom\\'a\\v{s} Vina\\v{r}",
        ["Rastislav Šrámek", "Broňa Brejová", "Tomáš Vinař"],
    ),
    ("Mikkel {\\O}bro", ["Mikkel Øbro"]),  # K: 0704.0049
    ("J.P.Hague and N.d'Ambrumenil", ["J.P.Hague", "N.d'Ambrumenil"]),  # K: 0704.0030
    ("Sudha, A. V. Gopala Rao", ["Sudha", "A. V. Gopala Rao"]),  # K: 0704.0147, one-word name
    # B: TeX accents written with a space or an escaped brace
    ("K. T\\H okési, L. Wirtz", ["K. Tőkési", "L. Wirtz"]),
    ("M. Cencelj, A. Vavpeti\\v\\{c}, \\v\\{Z}. Virk", ["M. Cencelj", "A. Vavpetič", "Ž. Virk"]),
    # B: TeX's \and between authors
    (
        "Louis-Charles Caron, \\and Michiel D'Haene, \\and Frédéric Mailhot",
        ["Louis-Charles Caron", "Michiel D'Haene", "Frédéric Mailhot"],
    ),
    # B: a typo'd macro keeps its letters rather than losing the surname
    ("Nguyen Viet Hung, Pawe\\lZiń", ["Nguyen Viet Hung", "PawelZiń"]),
    # B: semicolons and empty slots
    ("S. A. Belbas, ; Jong Seo Park", ["S. A. Belbas", "Jong Seo Park"]),
    (
        "Michael Brenner, Sascha Hilgenfeldt, Detlef Lohse, ;",
        ["Michael Brenner", "Sascha Hilgenfeldt", "Detlef Lohse"],
    ),
    ("James P. Burke,, Chris H. Greene", ["James P. Burke", "Chris H. Greene"]),
    # B: collaborations, "for the" / "on behalf of the"
    ("Sven Menke, for the ATLAS Collaboration", ["Sven Menke", "ATLAS Collaboration"]),
    (
        "K. Nishimura on behalf of the Belle II Particle Identification Group",
        ["K. Nishimura", "the Belle II Particle Identification Group"],
    ),
    (" The HERMES Collaboration", ["The HERMES Collaboration"]),
    ("the CMS Collaboration", ["the CMS Collaboration"]),
    # B: "et al." glued to a name, "et. al"
    (
        " SuperB Collaboration, E. Grauges et al., Francesco Forti",
        ["SuperB Collaboration", "E. Grauges", "Francesco Forti"],
    ),
    ("A. S. R. Murty et. al", ["A. S. R. Murty"]),
    # B: affiliation markers that are not in parentheses
    ("Ting Chen, Wei Wu, Pingxing Chen1", ["Ting Chen", "Wei Wu", "Pingxing Chen"]),
    ("R. J. Sewell, 1, M. W. Mitchell", ["R. J. Sewell", "M. W. Mitchell"]),
    (
        "The NL-eEDM collaboration, :, Parul Aggarwal",
        ["The NL-eEDM collaboration", "Parul Aggarwal"],
    ),
    (
        "Thomas A. Henzinger, <br> Jean-Francois Raskin",
        ["Thomas A. Henzinger", "Jean-Francois Raskin"],
    ),
    # B: names that look like suffixes but are not
    ("Dionisis Stefanatos, Jr-Shin Li", ["Dionisis Stefanatos", "Jr-Shin Li"]),
    ("Jose F. Rodrigues-Jr, Gabriel Spadon", ["Jose F. Rodrigues-Jr", "Gabriel Spadon"]),
    # Suffixes stay with their person
    ("John Smith, Jr., Jane Doe", ["John Smith Jr.", "Jane Doe"]),
    ("John Smith, Jr. and Jane Doe, III", ["John Smith Jr.", "Jane Doe III"]),
    ("A. Smith (MIT), B. Jones (1,2)", ["A. Smith", "B. Jones"]),
    ("A. Smith (MIT, B. Jones", ["A. Smith"]),  # unclosed: the affiliation runs to the end
    ("A. B. Smith$^{1}$, C. Jones$^2$", ["A. B. Smith", "C. Jones"]),
    ("Alice Smith & Bob Jones", ["Alice Smith", "Bob Jones"]),
    (
        "Ronald Lipton, for the Fermilab Pixel R&D Group",
        ["Ronald Lipton", "Fermilab Pixel R&D Group"],
    ),
    ("", []),
    ("  \n ", []),
    ("et al.", []),
]


@pytest.mark.parametrize(("raw", "expected"), CASES)
def test_split_real_author_strings(raw: str, expected: list[str]) -> None:
    assert names(raw) == expected


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("Balázs Kégl", "balazs kegl"),
        ("C.-P. Yuan", "c p yuan"),
        ("C. -P. Yuan", "c p yuan"),
        ("  Mikkel   Øbro ", "mikkel obro"),
        ("Paweł Łukasz", "pawel lukasz"),
        ("Straße", "strasse"),
        ("P. T. O'Brien", "p t o brien"),
        ("Neal J. Evans II", "neal j evans ii"),
        ("The ATLAS Collaboration", "atlas collaboration"),
        ("the CMS collaboration", "cms collaboration"),
        ("The Anh Nguyen", "the anh nguyen"),  # "The" as a given name stays
        ("김철수", "김철수"),  # Hangul stays composed
        ("ガブリエル", "ガブリエル"),  # kana voicing marks are not accents
        ("Ж. Ерёмин", "ж еремин"),
        ("", ""),
    ],
)
def test_normalise_name(name: str, key: str) -> None:
    assert normalise_name(name) == key


def test_key_is_normalised_display_name() -> None:
    for author in parse_authors("C. Bal\\'azs, E. L. Berger, Tom\\'a\\v{s} Vina\\v{r}"):
        assert author.key == normalise_name(author.name)
    assert [a.key for a in parse_authors("C. Bal\\'azs, C.-P. Yuan")] == ["c balazs", "c p yuan"]


def test_authors_parsed_gives_the_split_and_resolved_names() -> None:
    # K: 0704.0001 - arXiv writes "C.-P." as "C. -P." in authors_parsed
    parsed = [["Balázs", "C.", ""], ["Berger", "E. L.", ""], ["Nadolsky", "P. M.", ""]]
    parsed.append(["Yuan", "C. -P.", ""])
    got = parse_authors("C. Bal\\'azs, E. L. Berger, P. M. Nadolsky, C.-P. Yuan", parsed)
    assert [a.name for a in got] == ["C. Balázs", "E. L. Berger", "P. M. Nadolsky", "C.-P. Yuan"]
    # K: 0704.0030 - authors_parsed spaces the initials, and that is the form we show
    got = parse_authors(
        "J.P.Hague and N.d'Ambrumenil", [["Hague", "J. P.", ""], ["d'Ambrumenil", "N.", ""]]
    )
    assert [a.name for a in got] == ["J. P. Hague", "N. d'Ambrumenil"]
    # K: 0704.0009 - the suffix column; K: 0704.0025 - a fourth, affiliation column
    assert names("Neal J. Evans II", [["Evans", "Neal J.", "II"]]) == ["Neal J. Evans II"]
    assert names("N. Nagaosa (1 and 3)", [["Nagaosa", "N.", "", "1 and 3"]]) == ["N. Nagaosa"]
    # K: 0704.0020 - a collaboration sits in the last-name column
    parsed = [["The BABAR Collaboration", "", ""], ["Aubert", "B.", ""]]
    assert names("The BABAR Collaboration, B. Aubert, et al", parsed) == [
        "The BABAR Collaboration",
        "B. Aubert",
    ]


def test_implausible_authors_parsed_falls_back_to_the_string() -> None:
    raw = ", ".join(f"A. Author{i}" for i in range(12)).replace("Author", "Smith")
    assert len(names(raw, [["Smith", "A.", ""]])) == 12  # one entry for twelve authors
    assert names("Ann Lee, Bo Chen", [["Lee"], "junk"]) == ["Ann Lee", "Bo Chen"]  # type: ignore[list-item]
    assert names("Ann Lee, Bo Chen", []) == ["Ann Lee", "Bo Chen"]
    # within tolerance, authors_parsed wins even when the counts differ
    assert names("Ann Lee, Bo Chen, Kim", [["Lee", "Ann", ""], ["Chen", "Bo", ""]]) == [
        "Ann Lee",
        "Bo Chen",
    ]


def test_kaggle_head_authors_follow_authors_parsed() -> None:
    """All 200 real records: one author per authors_parsed entry, no TeX left over."""
    with KAGGLE_HEAD.open(encoding="utf-8") as fh:
        for line in fh:
            rec = json.loads(line)
            got = parse_authors(rec["authors"], rec["authors_parsed"])
            assert len(got) == len(rec["authors_parsed"]), rec["id"]
            for a in got:
                assert a.name and a.key and not any(c in a.name for c in "\\{}()\n"), rec["id"]
            # the raw string alone splits the same way
            assert len(parse_authors(rec["authors"])) == len(got), rec["id"]


def test_pylatexenc_only_for_tex(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Recorder:
        def latex_to_text(self, text: str) -> str:
            calls.append(text)
            return text

    monkeypatch.setattr(authors, "_LATEX", Recorder())
    authors.decode_tex.cache_clear()
    try:
        parse_authors("Gábor Vattay, Imre M. Jánosi and J. O'Neil (MIT), A. Smith et al.")
        assert calls == []
        parse_authors("C. Bal\\'azs, E. L. Berger, Mikkel {\\O}bro")
        assert calls == ["C. Bal\\'azs", "Mikkel {\\O}bro"]
    finally:
        authors.decode_tex.cache_clear()


def _demo_records() -> list[dict[str, Any]]:
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_tex_decoder_only_sees_tex_looking_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The slow pylatexenc path (hundreds of µs a call) runs only on names with TeX in them;
    speed itself is measured by the import benchmark, not here."""
    seen: list[str] = []
    real = authors.decode_tex

    def spy(text: str) -> str:
        seen.append(text)
        return real(text)

    monkeypatch.setattr(authors, "decode_tex", spy)
    with KAGGLE_HEAD.open(encoding="utf-8") as fh:
        for line in fh:
            parse_authors(json.loads(line)["authors"])
    assert seen
    assert all("\\" in t or "{" in t for t in seen)


def test_affiliations_and_addresses_are_not_authors() -> None:
    """The demo record whose author string runs into its address (cmp-lg, Toshiba): the
    two people stay; the laboratory, the company, the ward, the city and the country go."""
    (record,) = [r for r in _demo_records() if "Toshiba Corporation" in r["authors"]]
    names = [a.name for a in parse_authors(record["authors"], record.get("authors_parsed"))]
    assert names == ["Kenji Ono", "Kazuo Sumita"]
    assert [a.name for a in parse_authors("J. Doe, Fokus Fraunhofer Institute, Germany")] == [
        "J. Doe"
    ]
    assert [a.name for a in parse_authors("A. B. Smith, NY 11794-3651, 9 pages")] == ["A. B. Smith"]


def test_names_that_look_like_places_stay_and_marks_go() -> None:
    # Real names from the corpora: a country or a street word inside a name is a name.
    raw = "Robert K. France, David Israel, Emilio Vital Brazil, Jason Street, Madonna"
    assert [a.name for a in parse_authors(raw)] == [
        "Robert K. France", "David Israel", "Emilio Vital Brazil", "Jason Street", "Madonna",
    ]  # fmt: skip
    # Collaborations with digits in their names are authors.
    raw = "the SOC2 team, the D0 Collaboration, M1S2S-Collaboration"
    assert len(parse_authors(raw)) == 3
    # Affiliation numbers at the edges of a name go (from the bench snapshot).
    raw = "1 Gil Porat, 1Oumair Naseer, Ajay Jha 1"
    assert [a.name for a in parse_authors(raw)] == ["Gil Porat", "Oumair Naseer", "Ajay Jha"]
    assert is_affiliation("Rank Xerox Research Centre") and is_affiliation("Japan")
