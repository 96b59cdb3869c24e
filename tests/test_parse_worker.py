"""ParallelReader: the same papers, skips and errors as SnapshotReader, from a child process."""

from __future__ import annotations

import gzip
import json
import lzma
import multiprocessing
import os
import pickle
import re
import signal
from collections.abc import Callable
from dataclasses import fields
from datetime import date
from itertools import islice
from pathlib import Path

import pytest

from papersift.core.errors import ImportFormatError
from papersift.core.paper import Author, Paper
from papersift.core.resources import demo_corpus_path
from papersift.indexer import parse_worker
from papersift.indexer.parse_worker import ParallelReader
from papersift.indexer.snapshot import SkippedLine, SnapshotReader

pytestmark = pytest.mark.timeout(120)  # a hang is a failure, not a stuck run

FIXTURES = Path(__file__).parent / "fixtures" / "snapshot"
COMPRESS: dict[str, Callable[[bytes], bytes]] = {
    "plain": lambda b: b,
    "gz": gzip.compress,
    "xz": lzma.compress,
}


def expected(path: Path, limit: int | None = None) -> tuple[list[Paper], list[SkippedLine]]:
    skipped: list[SkippedLine] = []
    return list(islice(SnapshotReader(path, skipped.append), limit)), skipped


def read(reader: ParallelReader) -> tuple[list[list[Paper]], list[SkippedLine]]:
    skipped: list[SkippedLine] = []
    reader.on_skip = skipped.append
    return list(reader), skipped


def flat(batches: list[list[Paper]]) -> list[Paper]:
    return [p for b in batches for p in b]


def messy_lines() -> bytes:
    """Real records with damaged, null-filled, blank and non-UTF-8 lines between them."""
    good = (FIXTURES / "real.jsonl").read_bytes().splitlines()
    good += (FIXTURES / "kaggle-head200.jsonl").read_bytes().splitlines()
    rec = json.loads(good[1])
    nulls = {k: None for k in rec} | {"id": "0704.0002", "title": "T", "update_date": "2020-2-1"}
    bad = [
        b"",
        b'{"id": "0704.0001", "title": ',
        b"[1, 2]",
        b'"a string"',
        json.dumps({**rec, "id": None}).encode(),
        json.dumps({**rec, "title": None}).encode(),
        json.dumps({**rec, "versions": None, "update_date": None}).encode(),
        json.dumps(nulls).encode(),
        json.dumps({**nulls, "update_date": "2020-02-01", "authors": None}).encode(),
        '{"id": "0704.0003", "title": "Ã©t\xe9"}'.encode("latin-1"),
        b"   \t",
    ]
    lines = []
    for i, line in enumerate(good):
        lines.append(line)
        if i % 7 == 3:
            lines.append(bad[i % len(bad)])
    return b"\n".join(lines) + b"\n" + good[5][:40]  # a cut last line, no newline


def write(tmp_path: Path, kind: str, data: bytes) -> Path:
    path = tmp_path / f"messy.jsonl.{kind}"
    path.write_bytes(COMPRESS[kind](data))
    return path


@pytest.fixture(scope="module")
def demo_xz_cut(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data = gzip.decompress(demo_corpus_path().read_bytes())
    packed = lzma.compress(data, preset=0)  # the format matters here, not the ratio
    path = tmp_path_factory.mktemp("cut") / "cut.jsonl.xz"
    path.write_bytes(packed[: len(packed) // 2])
    return path


# -- same output as SnapshotReader --------------------------------------------------------


def test_demo_corpus_in_a_child_equals_snapshot_reader() -> None:
    path = demo_corpus_path()
    papers, skipped = expected(path)
    reader = ParallelReader(path, in_process=False)
    progress = []
    got: list[list[Paper]] = []
    for batch in reader:
        got.append(batch)
        progress.append(reader.bytes_read)
    assert flat(got) == papers and len(papers) == 6267 and skipped == []
    assert [len(b) for b in got] == [2000, 2000, 2000, 267]
    assert progress == sorted(progress) and 0 < progress[0] < progress[-1]
    assert reader.bytes_read == reader.total_bytes == path.stat().st_size
    assert reader.process is not None and reader.process.exitcode == 0


@pytest.mark.parametrize("in_process", [False, True])
@pytest.mark.parametrize("kind", ["plain", "gz", "xz"])
def test_messy_file_equals_snapshot_reader(tmp_path: Path, kind: str, in_process: bool) -> None:
    path = write(tmp_path, kind, messy_lines())
    papers, skipped = expected(path)
    batches, got_skipped = read(ParallelReader(path, batch=50, in_process=in_process))
    assert flat(batches) == papers and len(papers) == 213
    assert [len(b) for b in batches] == [50, 50, 50, 50, 13]
    assert got_skipped == skipped and len(skipped) == 23
    assert {s.reason for s in skipped} >= {"no id", "not UTF-8", "not a JSON object but str"}


@pytest.mark.parametrize("limit", [0, 1, 49, 50, 51, 130, 213, 500])
def test_limit_reads_like_islice(tmp_path: Path, limit: int) -> None:
    path = write(tmp_path, "gz", messy_lines())
    papers, skipped = expected(path, limit)
    for in_process in (False, True):
        reader = ParallelReader(path, limit=limit, batch=50, in_process=in_process)
        batches, got_skipped = read(reader)
        assert flat(batches) == papers and len(papers) == min(limit, 213)
        assert got_skipped == skipped
        assert [] not in batches


def test_empty_and_blank_files(tmp_path: Path) -> None:
    for data in (b"", b"\n\n  \n"):
        path = write(tmp_path, "xz", data)
        assert read(ParallelReader(path, in_process=False)) == ([], [])


# -- errors -------------------------------------------------------------------------------


@pytest.mark.parametrize("in_process", [False, True])
def test_truncated_xz_fails_like_snapshot_reader(demo_xz_cut: Path, in_process: bool) -> None:
    papers: list[Paper] = []
    with pytest.raises(ImportFormatError) as want:
        papers.extend(SnapshotReader(demo_xz_cut))
    got: list[Paper] = []
    with pytest.raises(ImportFormatError) as err:
        for batch in ParallelReader(demo_xz_cut, batch=500, in_process=in_process):
            got.extend(batch)
    assert str(err.value) == str(want.value)
    assert re.match(r".*cut\.jsonl\.xz is truncated or corrupt after line \d+: ", str(err.value))
    assert "\n" not in str(err.value)
    assert got == papers and 1000 < len(got) < 6267 and len(got) % 500 != 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"BZh91AY&SY rest", "is bzip2-compressed; use plain, .gz or .xz"),
        (b'[{"id": "0704.0001"}]\n', "is a JSON array; expected JSON lines"),
        (gzip.compress(b"<html>not found</html>\n"), "is not JSON lines: line 1"),
    ],
)
def test_unreadable_file_raises_the_same_error(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "input.jsonl"
    path.write_bytes(content)
    with pytest.raises(ImportFormatError, match=re.escape(f"{path} {message}")):
        list(ParallelReader(path, in_process=False))


def test_missing_file_fails_at_once(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match="cannot read"):
        ParallelReader(tmp_path / "nope.jsonl")


def test_killed_child_is_an_error_naming_the_file_not_a_hang() -> None:
    reader = ParallelReader(demo_corpus_path(), batch=100, in_process=False)
    batches = reader.batches()
    next(batches)
    assert reader.process is not None and reader.process.pid is not None
    os.kill(reader.process.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match=r"process parsing .*arxiv-demo\.jsonl\.gz died") as e:
        for _ in batches:
            pass
    assert "exit code -9" in str(e.value)
    assert reader.process not in multiprocessing.active_children()


def test_child_reports_an_unexpected_error_in_one_line(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def boom(*args: object) -> None:
        raise ValueError("bad\nthing")

    # Run the child's function here, with its SIGINT change and its parser replaced.
    monkeypatch.setattr(signal, "signal", lambda *a: None)
    monkeypatch.setattr(parse_worker, "_produce", boom)
    receiver, sender = multiprocessing.Pipe(duplex=False)
    parse_worker._child(str(tmp_path / "x.jsonl"), None, 10, sender)
    assert pickle.loads(receiver.recv_bytes()) == ("crash", "ValueError: bad thing")
    with pytest.raises(EOFError):
        receiver.recv_bytes()


# -- the child ends with its consumer -----------------------------------------------------


def assert_child_gone(reader: ParallelReader) -> None:
    proc = reader.process
    assert proc is not None and proc.exitcode is not None and not proc.is_alive()
    assert proc not in multiprocessing.active_children()


def test_closing_the_iterator_ends_the_child() -> None:
    reader = ParallelReader(demo_corpus_path(), batch=100, in_process=False)
    batches = reader.batches()
    assert len(next(batches)) == 100
    batches.close()  # type: ignore[attr-defined]
    assert_child_gone(reader)
    assert reader.process is not None and reader.process.exitcode == -signal.SIGTERM


def test_dropping_the_iterator_ends_the_child() -> None:
    reader = ParallelReader(demo_corpus_path(), batch=100, in_process=False)
    for _ in reader:
        break  # the for loop drops the only reference
    assert_child_gone(reader)


@pytest.mark.parametrize("error", [KeyboardInterrupt, ValueError])
def test_an_exception_in_the_consumer_ends_the_child(error: type[BaseException]) -> None:
    with pytest.raises(error), ParallelReader(demo_corpus_path(), in_process=False) as reader:
        for _ in reader:
            raise error()
    assert_child_gone(reader)


def test_reading_again_starts_a_new_child() -> None:
    path = demo_corpus_path()
    reader = ParallelReader(path, limit=5000, batch=1000, in_process=False)
    first = flat(list(reader))
    proc = reader.process
    assert flat(list(reader)) == first == expected(path, 5000)[0]
    assert reader.process is not proc


# -- choices and the wire format ----------------------------------------------------------


def test_small_files_and_small_limits_are_read_in_process(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = write(tmp_path, "plain", messy_lines())
    assert ParallelReader(path).in_process
    monkeypatch.setattr(parse_worker, "CHILD_MIN_BYTES", 0)
    assert not ParallelReader(path).in_process
    assert not ParallelReader(path, limit=parse_worker.CHILD_MIN_PAPERS).in_process
    assert ParallelReader(path, limit=parse_worker.CHILD_MIN_PAPERS - 1).in_process
    assert ParallelReader(path, in_process=True).in_process
    batches, _ = read(ParallelReader(path, batch=50))
    assert flat(batches) == expected(path)[0]
    with pytest.raises(ValueError):
        ParallelReader(path, batch=0)


def test_wire_format_keeps_every_field() -> None:
    # A new Paper field must be added to _encode and _decode, and to this list.
    assert [f.name for f in fields(Paper)] == [
        "arxiv_id", "version", "title", "abstract", "authors", "categories", "published",
        "updated", "doi", "journal_ref", "comments", "license", "citation_count", "extra",
    ]  # fmt: skip
    paper = Paper(
        arxiv_id="2401.10241",
        version=3,
        title="T",
        abstract="A",
        authors=(Author("Ann Lee", "ann lee", (("orcid", "0000-0001"),)), Author("B", "b")),
        categories=("cs.IR", "cs.CL"),
        published=date(2024, 1, 18),
        updated=date(2024, 2, 29),
        doi="10.1/x",
        journal_ref="J",
        comments="C",
        license="L",
        citation_count=7,
        extra=(("k", "v"),),
    )
    row = parse_worker._encode(paper)
    assert parse_worker._decode(pickle.loads(pickle.dumps(row))) == paper
    assert all(isinstance(v, str | int | tuple | type(None)) for v in row)
