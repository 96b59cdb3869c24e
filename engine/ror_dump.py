"""ROR's data dump as it is shipped, read as a stream of JSON values: the .zip of Zenodo's
"ROR Data" community (its schema v2 JSON picked), or that JSON as a JSON array or JSON
lines, plain, .gz or .xz. The whole registry is ~120k records, a few hundred MB of JSON, so
nothing holds more than a chunk of it at once: a JSON array is parsed incrementally by ijson
(its C backend, yajl), one record at a time.

What the values mean is ``engine.ror``.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import ijson

from papersift.core.compressed import DAMAGE, compression, damaged, numbered_lines, open_stream
from papersift.core.errors import ImportFormatError

# What import-ror reads, for its errors; the dump comes from Zenodo ("ROR Data" community).
FORMATS = (
    "ROR's data dump: its .zip as Zenodo has it, or the schema v2 .json in it (plain, .gz or .xz)"
)
CHUNK = 1 << 20  # bytes of a JSON array parsed per read
_MAX_VALUE = 64 << 20  # no ROR record comes near: a first line longer than this is no JSON lines
_BOM = b"\xef\xbb\xbf"
_Stream = IO[bytes] | io.BufferedIOBase  # a zip member, a decompressed file or the file


@dataclass(frozen=True, slots=True)
class NotJson:
    """A line of a JSON-lines dump that is no JSON: skipped, unless it is the first."""

    where: str  # "line 3"
    reason: str


def dump_values(path: Path) -> Generator[Any, None, None]:
    """The JSON values of a ROR dump in file order, a line of JSON lines that does not parse
    as a NotJson. Raises ImportFormatError for a file or zip that cannot be read, a JSON
    array that does not parse, and damaged compressed data (after the values before it)."""
    with _opened(path) as stream:
        try:
            start = _blank_start(stream)
        except DAMAGE as e:
            raise damaged(path, "line 0", e) from e
        if start.lstrip().startswith(b"["):
            yield from _array_values(start, stream, path)
        else:
            yield from _json_lines(_rejoined(start, stream), path)


@contextmanager
def _opened(path: Path) -> Iterator[_Stream]:
    """The decompressed bytes of the dump: of the JSON member of ROR's zip, or the file."""
    if compression(path) != "zip":
        stream, raw = open_stream(path, formats="plain, .gz, .xz or ROR's .zip")
        with stream, raw:
            yield stream
        return
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as e:
        raise ImportFormatError(f"{path} is no readable zip archive ({e}); cut short?") from e
    with archive:
        member = zip_member(archive, path)
        try:
            opened = archive.open(member)
        except (zipfile.BadZipFile, NotImplementedError, RuntimeError) as e:
            raise ImportFormatError(f"{path}: cannot read {member.filename} ({e})") from e
        with opened:
            yield opened


def zip_member(archive: zipfile.ZipFile, path: Path) -> zipfile.ZipInfo:
    """The JSON file of ROR's zip: the only one, or of several the one whose name says
    ``schema_v2`` (dumps of 2024 hold schema v1 as ``…-ror-data.json`` beside it)."""
    files = [i for i in archive.infolist() if not i.is_dir()]
    jsons = [
        i
        for i in files
        if i.filename.lower().endswith((".json", ".jsonl"))
        and not i.filename.startswith("__MACOSX/")  # what a Mac adds when it zips
    ]
    v2 = [i for i in jsons if "schema_v2" in i.filename.lower()]
    if len(v2 or jsons) == 1:
        return (v2 or jsons)[0]
    names = [i.filename for i in (v2 or jsons or files)]
    shown = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
    if not files:
        raise ImportFormatError(f"{path} is an empty zip archive; import-ror reads {FORMATS}")
    if not jsons:
        raise ImportFormatError(f"{path} holds no JSON file ({shown}); import-ror reads {FORMATS}")
    raise ImportFormatError(
        f"{path} holds several JSON files ({shown}); unzip it and name the one to import"
    )


def _blank_start(stream: _Stream) -> bytes:
    """The first bytes of the stream, up to one that is not blank (all of them, if none
    is), a UTF-8 byte order mark dropped: enough to tell a JSON array from JSON lines."""
    start = stream.read(3).removeprefix(_BOM)
    while not start.strip():
        more = stream.read(64)
        if not more:
            break
        start += more
    return start


def _rejoined(start: bytes, stream: _Stream) -> Iterator[bytes]:
    """The lines of JSON lines whose first bytes ``start`` were read apart. The first line
    is read to at most ``_MAX_VALUE`` bytes: a file that is no JSON lines and has few
    newlines is refused without reading it all."""
    yield from io.BytesIO(start + stream.readline(_MAX_VALUE))
    yield from stream


def _json_lines(lines: Iterable[bytes], path: Path) -> Iterator[Any]:
    for n, line in numbered_lines(lines, path):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except UnicodeDecodeError:
            yield NotJson(f"line {n}", "not UTF-8")
        except json.JSONDecodeError as e:
            yield NotJson(f"line {n}", f"invalid JSON ({e.msg})")
        except RecursionError:
            yield NotJson(f"line {n}", "invalid JSON (nested too deeply)")


def _array_values(start: bytes, stream: _Stream, path: Path) -> Iterator[Any]:
    """The values of a JSON array whose first bytes ``start`` were read apart from
    ``stream``, parsed a chunk at a time (``json.load`` held the whole registry, several GB
    as objects). A cut or damaged array ends the reading: no record after it can be told
    apart."""
    count = 0  # values read whole
    try:
        for value in ijson.items(_Rejoined(start, stream), "item", use_float=True, buf_size=CHUNK):
            count += 1
            yield value
    except DAMAGE as e:
        raise damaged(path, f"record {count}", e) from e
    except ijson.JSONError as e:  # yajl's message is its first line, then the text around
        raise damaged(path, f"record {count}", str(e).splitlines()[0]) from e


class _Rejoined:
    """``start``, read apart to tell a JSON array from JSON lines, then the rest of
    ``stream``: one file to ijson."""

    def __init__(self, start: bytes, stream: _Stream) -> None:
        self.start, self.stream = start, stream

    def read(self, size: int = -1) -> bytes:
        if self.start and size != 0:  # ijson reads 0 bytes first, to see bytes or str
            data, self.start = self.start, b""
            return data
        return self.stream.read(size)
