"""ROR's data dump as it is shipped, read as a stream of JSON values: the .zip of Zenodo's
"ROR Data" community (its schema v2 JSON picked), or that JSON as a JSON array or JSON
lines, plain, .gz or .xz. The whole registry is ~120k records, a few hundred MB of JSON, so
nothing holds more than a chunk of it at once.

What the values mean is ``engine.ror``.
"""

from __future__ import annotations

import codecs
import io
import json
import re
import zipfile
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, NoReturn

from papersift.core.compressed import DAMAGE, compression, damaged, numbered_lines, open_stream
from papersift.core.errors import ImportFormatError

# What import-ror reads, for its errors; the dump comes from Zenodo ("ROR Data" community).
FORMATS = (
    "ROR's data dump: its .zip as Zenodo has it, or the schema v2 .json in it (plain, .gz or .xz)"
)
CHUNK = 1 << 20  # characters of a JSON array decoded per read
_MAX_VALUE = 64 << 20  # no ROR record comes near: a value longer than this is damage
_SPACE = re.compile(r"[ \t\n\r]*")
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
        head = start.lstrip()
        if head.startswith(b"["):
            yield from _ArrayValues(stream, path, head[1:])
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


class _ArrayValues:
    """The values of a JSON array whose "[" has been read (``head``: the bytes read after
    it), decoded one at a time from text read in chunks: ``json.load`` would hold the whole
    registry, several GB as objects. A value that does not parse ends the reading (no
    record after it can be told apart)."""

    def __init__(self, stream: _Stream, path: Path, head: bytes) -> None:
        self.stream, self.path, self.head = stream, path, head
        self.utf8 = codecs.getincrementaldecoder("utf-8")()
        self.text, self.pos, self.eof = "", 0, False
        self.count = 0  # values decoded

    def __iter__(self) -> Iterator[Any]:
        decode = json.JSONDecoder().raw_decode
        after_value = False
        while True:
            c = self._next_char()
            if c == "":
                self._fail("the JSON array ends early")
            if c == "]":
                return
            if after_value:
                if c != ",":
                    self._fail(f"{c!r} where ',' or ']' should follow it")
                self.pos, after_value = self.pos + 1, False
                continue
            try:
                value, end = decode(self.text, self.pos)
            except json.JSONDecodeError as e:
                if self._read():  # the value may run on past the text read so far
                    continue
                self._fail(f"record {self.count + 1} does not parse ({e.msg})")
            except RecursionError:
                self._fail(f"record {self.count + 1} is nested too deeply")
            # A number at the end of the text read may go on ("1" of "1.5", "1" of "1e+5",
            # its cut part "." or "e+" not taken): read on and decode it again.
            if len(self.text) - end <= 2 and self._read():
                continue
            self.pos, after_value = end, True
            self.count += 1
            yield value

    def _next_char(self) -> str:
        """The next character that is not blank ("" at the end), at ``self.pos``."""
        while True:
            blank = _SPACE.match(self.text, self.pos)
            self.pos = blank.end() if blank else self.pos
            if self.pos < len(self.text):
                return self.text[self.pos]
            if not self._read():
                return ""

    def _read(self) -> bool:
        """Append the next chunk to the text not yet decoded, at least doubling it (a long
        value is decoded again per chunk: doubling keeps that linear); False at the end,
        or once the value has grown past ``_MAX_VALUE``."""
        pending = len(self.text) - self.pos
        if self.eof or pending > _MAX_VALUE:
            return False
        try:
            data = self.head + self.stream.read(max(CHUNK, pending))
            chunk = self.utf8.decode(data, final=not data)
        except DAMAGE as e:
            raise damaged(self.path, f"record {self.count}", e) from e
        except UnicodeDecodeError as e:
            raise ImportFormatError(
                f"{self.path} is not UTF-8 after record {self.count} ({e.reason})"
            ) from e
        self.head = b""
        self.text, self.pos, self.eof = self.text[self.pos :] + chunk, 0, not data
        return True

    def _fail(self, reason: str) -> NoReturn:
        raise damaged(self.path, f"record {self.count}", reason)
