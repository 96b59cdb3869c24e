"""Stream the arXiv bulk-snapshot JSON-lines format (plain, .gz or .xz) into Paper records."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any, TextIO

from papersift.core.authors import parse_authors
from papersift.core.compressed import compression, numbered_lines, open_stream
from papersift.core.errors import ImportFormatError
from papersift.core.paper import (
    MAX_VERSION,
    Paper,
    parse_arxiv_id,
    version_number,
    version_out_of_range,
)
from papersift.core.records import RecordError, checked
from papersift.core.taxonomy import ARCHIVES, LEGACY

__all__ = ["SkippedLine", "SnapshotReader", "open_text", "read_snapshot", "record_to_paper"]

# What a damaged file's error adds: an import commits the papers it read before the damage.
KEPT = (
    "the papers before it were imported, and importing a whole copy of the file adds the rest "
    "(those already in change nothing)"
)


@dataclass(frozen=True)
class SkippedLine:
    """A line of the snapshot that did not become a paper, and why."""

    line: int  # 1-based
    reason: str
    arxiv_id: str = ""  # for a record out of bounds (papersift.core.records.RecordError)
    field: str = ""


def open_text(path: Path) -> TextIO:
    """Open a plain, gzip or xz file (told apart by magic bytes) as streamed UTF-8 text.

    Raises ImportFormatError if the file cannot be opened or is compressed otherwise.
    """
    kind = compression(path)
    if kind == "gzip":
        return gzip.open(path, "rt", encoding="utf-8")
    if kind == "xz":
        return lzma.open(path, "rt", encoding="utf-8")
    _, raw = open_stream(path)  # plain (the stream is the file), or the error naming the kind
    return io.TextIOWrapper(raw, encoding="utf-8")


class SnapshotReader:
    """The papers of a snapshot file, one JSON object per line, in file order.

    Iterating streams the file.  A line that cannot become a paper (bad JSON, not an
    object, no id, no title, no date) goes to ``on_skip`` and reading goes on; blank lines
    are ignored.  For a progress bar, ``bytes_read`` is how much of the file on disk
    (compressed, if it is) has been consumed so far, out of ``total_bytes``.  Raises
    ImportFormatError if the file cannot be read, is not JSON lines, or its compressed data
    is truncated or corrupt (after yielding the papers before the damage).
    """

    def __init__(self, path: Path, on_skip: Callable[[SkippedLine], None] | None = None) -> None:
        self.path = path
        self.on_skip = on_skip
        try:
            self.total_bytes = path.stat().st_size
        except OSError as e:
            raise ImportFormatError(f"cannot read {path}: {e.strerror or e}") from e
        self.bytes_read = 0

    def __iter__(self) -> Iterator[Paper]:
        stream, raw = open_stream(self.path)
        checked = False
        with stream, raw:
            for line_no, line in numbered_lines(stream, self.path, KEPT):
                self.bytes_read = raw.tell()
                if not line.strip():
                    continue
                if not checked:
                    _check_json_lines(self.path, line_no, line)
                    checked = True
                paper = _line_to_paper(line)
                if isinstance(paper, Paper):
                    yield paper
                elif self.on_skip is not None:
                    self.on_skip(SkippedLine(line_no, *paper))
            self.bytes_read = raw.tell()


def read_snapshot(
    path: Path, on_skip: Callable[[SkippedLine], None] | None = None
) -> Iterator[Paper]:
    """Stream the papers of a snapshot file; see SnapshotReader, which also gives progress."""
    return iter(SnapshotReader(path, on_skip))


def record_to_paper(obj: dict[str, Any]) -> Paper:
    """Turn one snapshot record into a Paper; raises ValueError(reason) if it cannot be one."""
    arxiv_id, id_version = _arxiv_id(obj.get("id"))
    title = _clean(obj.get("title"))
    if not title:
        raise ValueError(f"{arxiv_id}: no title")

    numbered: list[tuple[int, date | None]] = []
    versions = obj.get("versions")
    if isinstance(versions, list):
        for entry in versions:
            if isinstance(entry, dict):
                n = _version_number(entry.get("version"), arxiv_id)
                if n is not None:
                    numbered.append((n, _parse_date(entry.get("created"))))
    numbered.sort(key=lambda nd: nd[0])
    dated = [d for _, d in numbered if d is not None]
    # v1 if it has a date, else the earliest dated version; the latest version likewise.
    published = numbered[0][1] if numbered and numbered[0][1] else min(dated, default=None)
    updated = numbered[-1][1] if numbered and numbered[-1][1] else max(dated, default=None)
    if updated is None:
        updated = _parse_date(obj.get("update_date")) or published
    if published is None:
        published = updated
    if published is None or updated is None:
        raise ValueError(f"{arxiv_id}: no usable date in versions or update_date")

    raw_authors = obj.get("authors")
    parsed = obj.get("authors_parsed")
    return checked(
        Paper(
            arxiv_id=arxiv_id,
            version=max(numbered[-1][0] if numbered else 1, id_version or 1),
            title=title,
            abstract=_clean(obj.get("abstract")) or "",
            authors=parse_authors(
                _clean(raw_authors) or "",
                _decontrol(parsed) if isinstance(parsed, list) else None,
            ),
            categories=_categories(obj.get("categories")),
            published=published,
            updated=max(updated, published),
            doi=_doi(obj.get("doi")),
            journal_ref=_clean(obj.get("journal-ref")),
            comments=_clean(obj.get("comments")),
            license=_clean(obj.get("license")),
        )
    )


def _check_json_lines(path: Path, line_no: int, line: bytes) -> None:
    first = line.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]  # a UTF-8 byte order mark is harmless
    if first == b"[":
        raise ImportFormatError(f"{path} is a JSON array; expected JSON lines, one object each")
    if first != b"{":
        raise ImportFormatError(f"{path} is not JSON lines: line {line_no} is not a JSON object")


def _line_to_paper(line: bytes) -> Paper | tuple[str, str, str]:
    """The paper on a line, or why there is none: (reason, arxiv id, field), the last two
    empty unless a field is out of bounds."""
    try:
        obj = json.loads(line)
    except UnicodeDecodeError:
        return "not UTF-8", "", ""
    except json.JSONDecodeError as e:
        # json's messages may end in "at" ("Invalid control character at"): one "at" here.
        return f"invalid JSON: {e.msg.removesuffix(' at')} at column {e.colno}", "", ""
    except RecursionError:
        return "invalid JSON: nested too deeply", "", ""
    if not isinstance(obj, dict):
        return f"not a JSON object but {type(obj).__name__}", "", ""
    try:
        return record_to_paper(obj)
    except RecordError as e:
        return str(e), e.arxiv_id, e.field
    except ValueError as e:  # the record's id, when it has one, for the report's id column
        raw_id = obj.get("id")
        shown = raw_id.strip()[:40] if isinstance(raw_id, str) else ""
        return str(e), shown, ""


# Ids that went through a float on their way into some dumps: "704.0001" was 0704.0001,
# "1003.353" was 1003.3530 and "1501.0208400000001" was 1501.02084.
_FLOAT_ID = re.compile(r"(\d{3,4})\.(\d+)")
_FLOAT_NOISE = Decimal("1e-9")


def _arxiv_id(value: object) -> tuple[str, int | None]:
    if isinstance(value, int | float) and not isinstance(value, bool):
        value = repr(value)
    if not isinstance(value, str) or not value.strip():
        raise ValueError("no id")
    text = value.strip()
    m = _FLOAT_ID.fullmatch(text)
    if m:
        text = _unfloat_id(m.group(1).zfill(4), m.group(2)) or text
    parsed = parse_arxiv_id(text)
    if parsed is None and version_out_of_range(text):
        shown = text if len(text) <= 40 else text[:40] + "…"
        raise RecordError(shown, "id", f"version outside 1..{MAX_VERSION}")
    if parsed is None or not _valid_month(parsed[0]):
        raise ValueError(f"invalid id {value!r}")
    return parsed


def _valid_month(arxiv_id: str) -> bool:
    """YYMM of the id is a real month; new-style ids start in April 2007."""
    archive, _, number = arxiv_id.rpartition("/")
    yymm = number[:4]
    return "01" <= yymm[2:] <= "12" and (bool(archive) or yymm >= "0704")


def _unfloat_id(yymm: str, number: str) -> str | None:
    width = 4 if yymm < "1501" else 5  # five-digit numbers since January 2015
    if len(number) > width:
        exact = Decimal(f"0.{number}")
        rounded = exact.quantize(Decimal(1).scaleb(-width))
        if abs(exact - rounded) > _FLOAT_NOISE:
            return None
        number = str(rounded)[2:]
    return f"{yymm}.{number.ljust(width, '0')}"


def _version_number(value: object, arxiv_id: str) -> int | None:
    """``"v2"`` as 2; None if it is no version; RecordError if its number is out of range."""
    if isinstance(value, str) and value[:1] in ("v", "V") and value[1:].isdecimal():
        n = version_number(value[1:])
        if n is None:
            shown = value if len(value) <= 24 else value[:24] + "…"
            raise RecordError(arxiv_id, "versions", f"{shown} is outside 1..{MAX_VERSION}")
        return n
    return None


_MONTHS = {"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8,
           "sep": 9, "oct": 10, "nov": 11, "dec": 12}  # fmt: skip
_RFC_DATE = re.compile(r"(\d{1,2})\s+([A-Za-z]{3})[a-z]*\.?\s+(\d{4})")


def _parse_date(value: object) -> date | None:
    """``"Mon, 2 Apr 2007 19:18:42 GMT"`` or ``"2016-08-22"`` as a date; None if neither."""
    if not isinstance(value, str):
        return None
    try:
        m = _RFC_DATE.search(value)
        if m:
            month = _MONTHS.get(m.group(2).lower())
            return date(int(m.group(3)), month, int(m.group(1))) if month else None
        return date.fromisoformat(value.strip()[:10])
    except ValueError:
        return None


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _decontrol(parsed: list[Any]) -> list[Any]:
    """``authors_parsed`` with control characters blanked in its strings."""
    return [
        [_CONTROL.sub(" ", p) if isinstance(p, str) else p for p in e] if isinstance(e, list) else e
        for e in parsed
    ]


def _clean(value: object) -> str | None:
    """Whitespace collapsed and stripped; None for null, non-strings and empty strings."""
    if not isinstance(value, str):
        return None
    if not value.isprintable():  # control characters are invalid in XML feeds and HTML
        value = _CONTROL.sub(" ", value)
    return " ".join(value.split()) or None


_ARCHIVES = frozenset(ARCHIVES) | frozenset(LEGACY)  # open and retired (core.taxonomy)
_CATEGORY = re.compile(r"([a-z]+(?:-[a-z]+)*)(?:\.[A-Za-z]+(?:-[a-z]+)*)?")
_NEW_ARCHIVE_CATEGORY = re.compile(r"[a-z]+(?:-[a-z]+)*\.[A-Z]{2,}")  # "new-arch.XY"


def _categories(value: object) -> tuple[str, ...]:
    """Known arXiv categories in order, deduplicated; some dumps append MSC or ACM codes
    and keywords ("cs.CV 68T45, I.2.6; spatial computing") to the field."""
    if not isinstance(value, str):
        return ()
    return tuple(dict.fromkeys(t for t in value.split() if _is_category(t)))


def _is_category(token: str) -> bool:
    m = _CATEGORY.fullmatch(token)
    if m is not None and m.group(1) in _ARCHIVES:
        return True
    return _NEW_ARCHIVE_CATEGORY.fullmatch(token) is not None


_DOI_PREFIX = re.compile(r"^(?:https?://)?(?:dx\.)?(?:doi\.org/|doi:\s*)", re.IGNORECASE)


def _doi(value: object) -> str | None:
    """The first DOI of the field (a few list an erratum's after it), without a URL prefix."""
    if not isinstance(value, str):
        return None
    dois = _DOI_PREFIX.sub("", value.strip()).split()
    return dois[0] if dois else None
