"""``import-ror`` on the files a lab admin gives it: ROR's .zip as Zenodo ships it, .xz, a
JSON array, a download cut short, and files that are no ROR data at all (an HTML page, an
arXiv snapshot, ROR's schema v1). Real ROR records (tests/fixtures/ror), real files."""

from __future__ import annotations

import gzip
import json
import logging
import lzma
import zipfile
from pathlib import Path
from typing import Any

import pytest

from papersift.cli import main
from papersift.core.config import Config
from papersift.core.errors import ImportFormatError
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import IMPORT_BATCH, Institutions
from papersift.engine.ror import MAX_LOGGED, Organisation, read_ror
from papersift.engine.ror_dump import CHUNK
from tests.corpus import demo_corpus_path, make_config
from tests.test_cli import run

ROR = Path(__file__).parent / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"  # 528 records
PREFIX = "papersift: error: "


@pytest.fixture(scope="module")
def records() -> list[dict[str, Any]]:
    with gzip.open(ROR, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


@pytest.fixture(scope="module")
def organisations() -> list[Organisation]:
    return list(read_ror(ROR))


def import_ror(config: Config, capsys: pytest.CaptureFixture[str], path: Path) -> tuple[int, str]:
    """``papersift import-ror --json PATH``: (exit code, stdout), or (1, its error line)."""
    code = main(
        ["import-ror", "--config", str(config.base_dir / "config.toml"), "--json", str(path)]
    )
    out = capsys.readouterr()
    return code, out.out if code == 0 else out.err


def registry(config: Config) -> tuple[int, int]:
    """(institutions, import count) of the data directory."""
    data = DataDir(config)
    try:
        reg = Institutions(data.store)
        return reg.count(), reg.version()
    finally:
        data.close()


def as_array(records: list[dict[str, Any]]) -> bytes:
    """ROR's JSON file: one JSON array, indented."""
    return json.dumps(records, ensure_ascii=False, indent=2).encode("utf-8")


def as_schema_v1(rec: dict[str, Any]) -> dict[str, Any]:
    """A real v2 record in the shape of ROR's schema v1 (``name``, ``aliases``, ``country``:
    the JSON of 2024 dumps beside the ``_schema_v2.json``)."""
    names = rec["names"]
    geo = rec["locations"][0]["geonames_details"]
    return {
        "id": rec["id"],
        "name": next(n["value"] for n in names if "ror_display" in n["types"]),
        "aliases": [n["value"] for n in names if "alias" in n["types"]],
        "acronyms": [n["value"] for n in names if "acronym" in n["types"]],
        "labels": [
            {"label": n["value"], "iso639": n["lang"]} for n in names if "label" in n["types"]
        ],
        "types": [t.capitalize() for t in rec["types"]],
        "status": rec["status"],
        "country": {"country_name": geo["country_name"], "country_code": geo["country_code"]},
        "addresses": [{"city": geo["name"], "lat": geo["lat"], "lng": geo["lng"]}],
    }


# -- the formats ROR ships --------------------------------------------------------------


def test_the_zip_as_ror_ships_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict[str, Any]]
) -> None:
    """Zenodo's dump is a .zip of one JSON array and a CSV; it was read as UTF-8 text and
    failed with a UnicodeDecodeError traceback."""
    path = tmp_path / "v2.1-2025-01-02-ror-data.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("v2.1-2025-01-02-ror-data.csv", "id,name\n" + records[0]["id"] + ",x\n")
        z.writestr("v2.1-2025-01-02-ror-data.json", as_array(records[:40]))
    config = make_config(tmp_path)
    code, out = import_ror(config, capsys, path)
    assert code == 0, out
    assert json.loads(out) == {
        "read": 40, "added": 40, "institutions": 40, "listed": 40, "skipped": []
    }  # fmt: skip
    assert registry(config) == (40, 1)


def test_a_zip_of_2024_gives_its_schema_v2_json(
    tmp_path: Path, records: list[dict[str, Any]], organisations: list[Organisation]
) -> None:
    """Dumps of 2024 hold schema v1 as ``…-ror-data.json`` and v2 as ``…_schema_v2.json``,
    each with its CSV: the v2 JSON is read."""
    path = tmp_path / "v1.55-2024-10-31-ror-data.zip"
    stem = "v1.55-2024-10-31-ror-data"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(f"{stem}.json", json.dumps([as_schema_v1(r) for r in records[:5]]))
        z.writestr(f"{stem}_schema_v2.json", as_array(records[:5]))
        z.writestr(f"{stem}.csv", "id,name\n")
        z.writestr(f"{stem}_schema_v2.csv", "id,names.types.ror_display\n")
    assert list(read_ror(path)) == organisations[:5]


@pytest.mark.parametrize("layout", ["array", "lines"])
def test_xz_reads_like_plain(
    tmp_path: Path, layout: str, records: list[dict[str, Any]], organisations: list[Organisation]
) -> None:
    """An .xz was read as UTF-8 text: UnicodeDecodeError. Told apart by its first bytes,
    not its name."""
    data = as_array(records) if layout == "array" else gzip.decompress(ROR.read_bytes())
    path = tmp_path / "ror-data.json"
    path.write_bytes(lzma.compress(data, preset=0))
    assert list(read_ror(path)) == organisations


def test_a_json_array_is_streamed_and_a_cut_one_is_one_line(
    tmp_path: Path, records: list[dict[str, Any]], organisations: list[Organisation]
) -> None:
    """A JSON array is decoded a chunk at a time (``json.load`` held the whole registry in
    memory: 447 MB for the 36k-record extract), records across chunks included; one cut
    short failed with a JSONDecodeError traceback."""
    data = as_array(records)
    assert len(data) > CHUNK  # records straddle a chunk end
    path = tmp_path / "ror.json"
    path.write_bytes(data)
    assert list(read_ror(path)) == organisations
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImportFormatError) as err:
        list(read_ror(path))
    assert str(err.value).startswith(f"{path} is truncated or corrupt after record 2")
    assert "\n" not in str(err.value)


# -- damaged and wrong files --------------------------------------------------------------


def test_a_truncated_gz_is_one_line_and_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict[str, Any]]
) -> None:
    """A download cut short ended in ``EOFError: Compressed file ended before the
    end-of-stream marker``. Now one line, as ``papersift import`` says it, and the batches
    written before the damage are rolled back: the registry is as it was."""
    config = make_config(tmp_path)
    few = tmp_path / "few.jsonl"
    few.write_text("".join(json.dumps(r) + "\n" for r in records[:3]), encoding="utf-8")
    assert import_ror(config, capsys, few)[0] == 0
    lines = [json.dumps(r) for r in records] * 5  # past IMPORT_BATCH: a batch is written
    assert len(lines) > IMPORT_BATCH + len(records)
    packed = gzip.compress(("\n".join(lines) + "\n").encode("utf-8"))
    cut = tmp_path / "ror-cut.jsonl.gz"
    cut.write_bytes(packed[: len(packed) * 9 // 10])
    out = run("import-ror", "--config", str(config.base_dir / "config.toml"), str(cut))
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith(f"{PREFIX}{cut} is truncated or corrupt after line ")
    assert out.stderr.endswith(": Compressed file ended before the end-of-stream marker "
                               "was reached\n"), out.stderr  # fmt: skip
    assert out.stderr.count("\n") == 1
    assert int(out.stderr.split("after line ")[1].split(":")[0]) > IMPORT_BATCH
    assert registry(config) == (3, 1)


@pytest.mark.parametrize(
    ("name", "content", "says"),
    [
        ("page.html", b"<!DOCTYPE html>\n<html><body>ROR</body></html>\n",
         "is not ROR data: line 1 is not JSON; import-ror reads ROR's data dump"),
        ("arxiv-demo.jsonl.gz", demo_corpus_path().read_bytes(),
         "is not ROR data: its first record (id '0707.1913') is no ROR organisation"),
        ("empty.json", b"  \n", "holds no records; import-ror reads ROR's data dump"),
        ("ror.csv.zip", None, "holds no JSON file (v1-ror-data.csv); import-ror reads"),
        ("ror.json.bz2", b"BZh91AY&SY", "is bzip2-compressed; use plain, .gz, .xz or ROR's .zip"),
    ],
)  # fmt: skip
def test_a_file_that_is_no_ror_data_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, content: bytes | None, says: str
) -> None:
    """An HTML page or an arXiv snapshot printed "0 organisations read … 6,267 records
    skipped", exited 0 and logged a warning per line. Now one line, exit 1, and the data
    directory is not even made."""
    path = tmp_path / name
    if content is None:
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("v1-ror-data.csv", "id,name\n")
    else:
        path.write_bytes(content)
    (tmp_path / "lab").mkdir()
    config = make_config(tmp_path / "lab")
    code, err = import_ror(config, capsys, path)
    assert code == 1 and err.startswith(f"{PREFIX}{path} {says}"), err
    assert err.count("\n") == 1, err
    assert not config.data_dir.exists()


def test_ror_schema_v1_is_refused_naming_the_v2_file(
    tmp_path: Path, records: list[dict[str, Any]]
) -> None:
    """Schema v1 has ``name``, not ``names``: its organisations were stored named by their
    ids. It names the file to give instead."""
    path = tmp_path / "v1.55-2024-10-31-ror-data.json"
    path.write_text(json.dumps([as_schema_v1(r) for r in records[:3]]), encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"is ROR schema v1; .* _schema_v2\.json$"):
        read_ror(path)


def test_a_zip_with_two_candidates_says_so(tmp_path: Path, records: list[dict[str, Any]]) -> None:
    path = tmp_path / "mine.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.json", as_array(records[:1]))
        z.writestr("b.json", as_array(records[1:2]))
    with pytest.raises(ImportFormatError, match=r"holds several JSON files \(a\.json, b\.json\)"):
        read_ror(path)
    path.write_bytes(path.read_bytes()[:100])  # cut short: no central directory
    with pytest.raises(ImportFormatError, match="is no readable zip archive"):
        read_ror(path)


def test_skipped_records_are_logged_up_to_a_cap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, records: list[dict[str, Any]]
) -> None:
    """Every skipped record was one WARNING: a wrong multi-GB file flooded the log. The
    first ``MAX_LOGGED`` are logged, then one count; ``skipped`` still has them all."""
    path = tmp_path / "ror.jsonl"
    path.write_text(json.dumps(records[0]) + "\n" + "{not json\n" * 30 + json.dumps(records[1]))
    skipped: list[str] = []
    with caplog.at_level(logging.WARNING, logger="papersift.engine.ror"):
        assert len(list(read_ror(path, skipped))) == 2
    assert len(skipped) == 30 and skipped[0] == "line 2: invalid JSON (Expecting property name " \
        "enclosed in double quotes)"  # fmt: skip
    said = [r.getMessage() for r in caplog.records]
    assert said[:MAX_LOGGED] == [f"ror: skipped {s}" for s in skipped[:MAX_LOGGED]]
    assert said[MAX_LOGGED:] == [f"ror: skipped 30 records in all (the first {MAX_LOGGED} logged)"]
