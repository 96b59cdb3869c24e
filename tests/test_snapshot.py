"""Reading arXiv snapshot files: real records, nulls, damaged lines and compressed files."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
import shutil
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from papersift.core.errors import ImportFormatError
from papersift.core.paper import Author, Paper, parse_arxiv_id
from papersift.core.resources import demo_corpus_path
from papersift.indexer.snapshot import (
    SkippedLine,
    SnapshotReader,
    open_text,
    read_snapshot,
    record_to_paper,
)

# Ten real records; see fixtures/snapshot/SOURCE.txt for where each line comes from.
REAL = Path(__file__).parent / "fixtures" / "snapshot" / "real.jsonl"
KAGGLE_HEAD = Path(__file__).parent / "fixtures" / "snapshot" / "kaggle-head200.jsonl"
CANONICAL_ID = re.compile(r"\d{4}\.\d{4,5}|[a-z-]+(\.[A-Z]{2})?/\d{7}")


def real_records() -> dict[str, dict[str, Any]]:
    lines = REAL.read_text(encoding="utf-8").splitlines()
    return {json.loads(line)["id"]: json.loads(line) for line in lines}


def read_all(path: Path) -> tuple[list[Paper], list[SkippedLine]]:
    skipped: list[SkippedLine] = []
    papers = list(read_snapshot(path, skipped.append))
    return papers, skipped


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


# -- record_to_paper ----------------------------------------------------------------------


def test_kaggle_record_becomes_paper() -> None:
    paper = record_to_paper(real_records()["0704.0001"])
    assert paper == Paper(
        arxiv_id="0704.0001",
        version=2,
        title="Calculation of prompt diphoton production cross sections at Tevatron and "
        "LHC energies",
        abstract=paper.abstract,
        authors=(
            Author("C. Balázs", "c balazs"),
            Author("E. L. Berger", "e l berger"),
            Author("P. M. Nadolsky", "p m nadolsky"),
            Author("C.-P. Yuan", "c p yuan"),
        ),
        categories=("hep-ph",),
        published=date(2007, 4, 2),
        updated=date(2007, 7, 24),
        doi="10.1103/PhysRevD.76.013009",
        journal_ref="Phys.Rev.D76:013009,2007",
        comments="37 pages, 15 figures; published version",
        license=None,
    )
    assert paper.abstract.startswith("A fully differential calculation in perturbative")
    assert paper.abstract.endswith("judicious selection of events.")
    assert "\n" not in paper.abstract and "  " not in paper.abstract


def test_demo_record_with_nulls_and_old_style_id() -> None:
    paper = record_to_paper(real_records()["cmp-lg/9405001"])
    assert paper.arxiv_id == "cmp-lg/9405001"
    assert paper.version == 1
    assert paper.categories == ("cmp-lg", "cs.CL")
    assert paper.published == paper.updated == date(1994, 5, 2)
    assert [a.name for a in paper.authors] == ["Ido Dagan", "Fernando Pereira", "Lillian Lee"]
    assert paper.doi is None and paper.journal_ref is None and paper.license is None


def test_tex_in_title_is_kept_as_is() -> None:
    rec = {**real_records()["0704.0001"], "title": "  The $\\alpha$ & <b> of\n  $B\\to K$ "}
    assert record_to_paper(rec).title == "The $\\alpha$ & <b> of $B\\to K$"


@pytest.mark.parametrize(
    ("raw_id", "arxiv_id"),
    [
        # Mangled by a float upstream (real, see SOURCE.txt); the bench snapshot holds the
        # same papers under both forms, e.g. "705.1283" and "0705.1283", "1606.0641" and
        # "1606.06410" (same title, date and categories).
        ("704.2902", "0704.2902"),
        ("1003.353", "1003.3530"),
        ("1501.0208400000001", "1501.02084"),
        ("1501.0546199999999", "1501.05462"),
        ("1108.27", "1108.2700"),
        ("1108.2", "1108.2000"),
        ("1606.0641", "1606.06410"),
        # Canonical ids stay as they are.
        ("2401.10241", "2401.10241"),
        ("0704.0001", "0704.0001"),
        ("cmp-lg/9405001", "cmp-lg/9405001"),
        ("math.AG/0601001", "math.AG/0601001"),
        (" hep-th/9901001 ", "hep-th/9901001"),
        # The same mangling as a JSON number.
        (704.2902, "0704.2902"),
        (1003.3530, "1003.3530"),
    ],
)
def test_ids(raw_id: Any, arxiv_id: str) -> None:
    rec = {**real_records()["2401.10241"], "id": raw_id}
    assert record_to_paper(rec).arxiv_id == arxiv_id


def test_version_suffix_is_stripped_and_counts() -> None:
    rec = real_records()["2401.10241"]
    assert record_to_paper({**rec, "id": "2401.10241v3"}).version == 3  # no v3 in versions
    paper = record_to_paper({**real_records()["0704.0001"], "id": "0704.0001v1"})
    assert (paper.arxiv_id, paper.version) == ("0704.0001", 2)


@pytest.mark.parametrize(
    ("raw_id", "reason"),
    [
        (None, "no id"),
        ("", "no id"),
        ("hello", "invalid id 'hello'"),
        ("1413.0001", "invalid id '1413.0001'"),  # month 13
        ("0612.0001", "invalid id '0612.0001'"),  # before the new scheme (April 2007)
        ("999.5", "invalid id '999.5'"),
        ("hep-th/9913001", "invalid id 'hep-th/9913001'"),
        (True, "no id"),
        ([], "no id"),
    ],
)
def test_bad_ids_are_rejected(raw_id: Any, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        record_to_paper({**real_records()["2401.10241"], "id": raw_id})


def test_missing_and_null_fields() -> None:
    rec = real_records()["0704.0001"]
    for key in ("submitter", "journal-ref", "report-no", "license", "doi", "comments"):
        rec[key] = None
    del rec["authors_parsed"]
    paper = record_to_paper(rec)
    assert paper.doi is None and paper.comments is None and paper.journal_ref is None
    assert paper.authors[0].name == "C. Balázs"  # from the TeX string
    bare = {"id": "0704.0001", "title": "T", "update_date": "2008-11-26"}
    paper = record_to_paper(bare)
    assert (paper.abstract, paper.authors, paper.categories) == ("", (), ())
    assert paper.published == paper.updated == date(2008, 11, 26)
    assert paper.version == 1
    assert record_to_paper({**bare, "doi": ""}).doi is None
    assert record_to_paper({**bare, "authors": None, "authors_parsed": None}).authors == ()


@pytest.mark.parametrize("title", [None, "", "  \n ", 42])
def test_no_title(title: Any) -> None:
    with pytest.raises(ValueError, match=r"0704\.0001: no title"):
        record_to_paper({**real_records()["0704.0001"], "title": title})


def test_dates() -> None:
    base = {"id": "0704.0001", "title": "T"}
    v = [
        {"version": "v2", "created": "Tue, 24 Jul 2007 20:10:27 GMT"},
        {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
    ]
    paper = record_to_paper({**base, "versions": v, "update_date": "2008-11-26"})
    assert (paper.published, paper.updated, paper.version) == (
        date(2007, 4, 2),
        date(2007, 7, 24),
        2,
    )
    # v1 without a usable date: the earliest dated version
    v_bad = [{"version": "v1", "created": "garbage"}, *v[:1]]
    paper = record_to_paper({**base, "versions": v_bad})
    assert paper.published == paper.updated == date(2007, 7, 24)
    # no dated version: update_date for both
    paper = record_to_paper({**base, "versions": [{"version": "v1"}], "update_date": "2016-08-22"})
    assert paper.published == paper.updated == date(2016, 8, 22)
    # the last version older than v1 (a broken record): updated is never before published
    v_odd = [
        {"version": "v1", "created": "Mon, 2 Apr 2007"},
        {"version": "v2", "created": "Sun, 1 Jan 2006"},
    ]
    paper = record_to_paper({**base, "versions": v_odd})
    assert paper.updated == paper.published == date(2007, 4, 2)
    for bad in (
        {},
        {"versions": None, "update_date": None},
        {"versions": [], "update_date": "soon"},
    ):
        with pytest.raises(ValueError, match=r"0704\.0001: no usable date"):
            record_to_paper({**base, **bad})
    with pytest.raises(ValueError, match="no usable date"):
        record_to_paper({**base, "versions": [{"version": "v1", "created": "Mon, 31 Feb 2007"}]})


def test_categories() -> None:
    base = {"id": "0704.0001", "title": "T", "update_date": "2008-11-26"}
    assert record_to_paper({**base, "categories": "math.CO cs.CG math.CO"}).categories == (
        "math.CO",
        "cs.CG",
    )
    # B: real field values from arxiv-snapshot-bench.jsonl.xz, with MSC/ACM codes and keywords
    real = "cs.AI cs.CV cs.LG cs.RO 68T45, 68T05 68T45, 68T05 68T45, 68T05 I.2.6; I.2.10; I.4.8"
    assert record_to_paper({**base, "categories": real}).categories == (
        "cs.AI",
        "cs.CV",
        "cs.LG",
        "cs.RO",
    )
    real = "cs.SE cs.AI cs.GR cs.HC spatial computing, extended reality,\n  spatial reasoning"
    assert record_to_paper({**base, "categories": real}).categories == (
        "cs.SE",
        "cs.AI",
        "cs.GR",
        "cs.HC",
    )
    old = "hep-th cond-mat.str-el physics.atom-ph q-bio.NC astro-ph.CO nlin.CD"
    assert record_to_paper({**base, "categories": old}).categories == tuple(old.split())
    # an archive arXiv adds later still counts when it has a subject class
    assert record_to_paper({**base, "categories": "new-arch.XY e.g cs"}).categories == (
        "new-arch.XY",
        "cs",
    )


def test_doi() -> None:
    base = {"id": "0704.0001", "title": "T", "update_date": "2008-11-26"}
    # B: real values; a second DOI is an erratum's
    two = "10.1103/PhysRevC.71.034001 10.1103/PhysRevC.71.069901"
    assert record_to_paper({**base, "doi": two}).doi == "10.1103/PhysRevC.71.034001"
    url = "doi.org/10.1142/S1793525319500134"
    assert record_to_paper({**base, "doi": url}).doi == "10.1142/S1793525319500134"
    assert record_to_paper({**base, "doi": " 10.1/x "}).doi == "10.1/x"
    assert record_to_paper({**base, "doi": "doi: 10.1/y"}).doi == "10.1/y"
    assert record_to_paper({**base, "doi": "https://doi.org/10.1/z"}).doi == "10.1/z"
    assert record_to_paper({**base, "doi": "   "}).doi is None


# -- files --------------------------------------------------------------------------------


def test_demo_corpus_parses_without_skips() -> None:
    papers, skipped = read_all(demo_corpus_path())
    assert skipped == []
    assert len(papers) == 6267
    assert all(CANONICAL_ID.fullmatch(p.arxiv_id) for p in papers)
    assert all(parse_arxiv_id(p.arxiv_id) == (p.arxiv_id, None) for p in papers)
    assert all(p.title and p.authors and p.categories for p in papers)
    assert all(p.published <= p.updated for p in papers)
    ids = {p.arxiv_id for p in papers}
    assert {"2401.10241", "2208.08124", "2402.02447", "cmp-lg/9405001"} <= ids
    # The demo holds 78 papers twice, once under a float-mangled id: repaired, they meet.
    assert len(ids) == 6267 - 78


def test_kaggle_head_parses_without_skips() -> None:
    papers, skipped = read_all(KAGGLE_HEAD)
    assert skipped == []
    assert [p.arxiv_id for p in papers] == [f"0704.{i:04d}" for i in range(1, 201)]


def test_damaged_lines_are_skipped_with_reasons(tmp_path: Path) -> None:
    recs = list(real_records().values())
    good = [json.dumps(r) for r in recs[:3]]
    lines = [
        good[0],
        "",  # blank lines are ignored
        '{"id": "0704.0001", "title": ',  # bad JSON
        "[1, 2]",  # not an object
        json.dumps({**recs[1], "id": None}),
        json.dumps({**recs[1], "title": None}),
        json.dumps({**recs[1], "versions": None, "update_date": None}),
        "   ",
        good[1],
        good[2][: len(good[2]) // 2],  # truncated last line, as from a cut download
    ]
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8")  # no final newline
    papers, skipped = read_all(path)
    assert [p.arxiv_id for p in papers] == [recs[0]["id"], recs[1]["id"]]
    assert [s.line for s in skipped] == [3, 4, 5, 6, 7, 10]
    reasons = [s.reason for s in skipped]
    assert reasons[0].startswith("invalid JSON: Expecting value at column")
    assert reasons[1] == "not a JSON object but list"
    assert reasons[2] == "no id"
    assert reasons[3] == "0704.0009: no title"
    assert reasons[4] == "0704.0009: no usable date in versions or update_date"
    assert reasons[5].startswith("invalid JSON")
    # The id column of the report (import --json) names the record when it has an id.
    assert [s.arxiv_id for s in skipped] == ["", "", "", "0704.0009", "0704.0009", ""]


def test_a_control_character_is_reported_in_one_plain_phrase(tmp_path: Path) -> None:
    path = tmp_path / "tab.jsonl"
    path.write_bytes(b'{"id": "0704.0001", "title": "a\tb"}\n')
    _, skipped = read_all(path)
    assert [s.reason for s in skipped] == ["invalid JSON: Invalid control character at column 32"]


def test_invalid_utf8_line_is_skipped(tmp_path: Path) -> None:
    good = REAL.read_bytes().splitlines()[0]
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(
        good + b"\n" + '{"id": "0704.0002", "title": "Ã©t\xe9"}'.encode("latin-1") + b"\n"
    )
    papers, skipped = read_all(path)
    assert len(papers) == 1
    assert skipped == [SkippedLine(2, "not UTF-8")]


@pytest.mark.parametrize("kind", ["gz", "xz"])
def test_compressed_files_read_like_plain(tmp_path: Path, kind: str) -> None:
    data = REAL.read_bytes()
    packed = gzip.compress(data) if kind == "gz" else lzma.compress(data, preset=0)
    # Told apart by magic bytes, not by suffix: give each the other's name.
    path = tmp_path / ("real.jsonl.xz" if kind == "gz" else "real.jsonl")
    path.write_bytes(packed)
    plain, _ = read_all(REAL)
    papers, skipped = read_all(path)
    assert papers == plain and len(papers) == 10 and skipped == []
    with open_text(path) as fh:
        assert fh.read() == data.decode("utf-8")


def test_progress_counts_compressed_bytes(tmp_path: Path) -> None:
    path = tmp_path / "demo.jsonl.gz"
    shutil.copyfile(demo_corpus_path(), path)
    reader = SnapshotReader(path)
    assert reader.total_bytes == path.stat().st_size
    assert reader.bytes_read == 0
    seen = []
    for i, _ in enumerate(reader):
        if i % 500 == 0:
            seen.append(reader.bytes_read)
    assert seen == sorted(seen) and 0 < seen[0] < seen[-1] < reader.total_bytes
    assert reader.bytes_read == reader.total_bytes


@pytest.mark.parametrize("kind", ["gz", "xz"])
def test_truncated_compressed_file_fails_after_good_papers(tmp_path: Path, kind: str) -> None:
    data = gzip.decompress(demo_corpus_path().read_bytes())
    packed = gzip.compress(data) if kind == "gz" else lzma.compress(data, preset=0)
    path = tmp_path / f"cut.jsonl.{kind}"
    path.write_bytes(packed[: len(packed) // 2])
    papers: list[Paper] = []
    with pytest.raises(ImportFormatError, match="is truncated or corrupt after line") as err:
        papers.extend(SnapshotReader(path))
    assert 1000 < len(papers) < 6267
    assert "\n" not in str(err.value)
    assert "the papers before it were imported" in str(err.value)  # what the import kept


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (bz2.compress(b'{"id": "0704.0001"}\n'), "is bzip2-compressed; use plain, .gz or .xz"),
        (b"PK\x03\x04rest of a zip", "is zip-compressed"),
        (b'[{"id": "0704.0001"}]\n', "is a JSON array; expected JSON lines"),
        (b"\n\nid,title\n0704.0001,T\n", "is not JSON lines: line 3 is not a JSON object"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "is not JSON lines: line 1"),
        (gzip.compress(b"<html>not found</html>\n"), "is not JSON lines"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    with pytest.raises(ImportFormatError, match=re.escape(message)) as err:
        list(read_snapshot(path))
    assert "\n" not in str(err.value)


def test_missing_file_and_directory(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="cannot read"):
        SnapshotReader(tmp_path / "nope.jsonl")
    with pytest.raises(ImportFormatError, match="cannot read"):
        open_text(tmp_path)
    with pytest.raises(ImportFormatError, match="is bzip2-compressed"):
        (tmp_path / "x.bz2").write_bytes(bz2.compress(b"{}"))
        open_text(tmp_path / "x.bz2")


def test_empty_and_blank_files(tmp_path: Path) -> None:
    assert read_all(write_lines(tmp_path / "empty.jsonl", [])) == ([], [])
    assert read_all(write_lines(tmp_path / "blank.jsonl", ["", "  ", "\t"])) == ([], [])
    # a byte order mark is harmless
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + REAL.read_bytes())
    papers, skipped = read_all(bom)
    assert len(papers) == 10 and skipped == []
