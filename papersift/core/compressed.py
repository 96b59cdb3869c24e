"""Input files as they are shipped: plain, gzip or xz, told apart by their first bytes and
read as one stream of bytes, and damage to compressed data (a download cut short) as one
line that says how far reading got, for ``papersift import`` and ``import-ror`` alike."""

from __future__ import annotations

import gzip
import io
import lzma
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path

from papersift.core.errors import ImportFormatError

_MAGIC = {b"\x1f\x8b": "gzip", b"\xfd7zXZ\x00": "xz", b"PK\x03\x04": "zip",
          b"BZh": "bzip2", b"(\xb5/\xfd": "zstd", b"7z\xbc\xaf": "7z"}  # fmt: skip
# What reading damaged data raises: gzip an EOFError or BadGzipFile (an OSError), xz an
# LZMAError or EOFError, a zip member BadZipFile ("Bad CRC-32") or zlib.error.
DAMAGE = (EOFError, OSError, lzma.LZMAError, zlib.error, zipfile.BadZipFile)


def compression(path: Path) -> str | None:
    """``"gzip"``, ``"xz"``, ``"zip"``, ``"bzip2"``, ``"zstd"``, ``"7z"`` or None (plain),
    from the first bytes of the file: a name may lie ("dump.json" that is gzip)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(6)
    except OSError as e:
        raise ImportFormatError(f"cannot read {path}: {e.strerror or e}") from e
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


def open_stream(
    path: Path, formats: str = "plain, .gz or .xz"
) -> tuple[io.BufferedIOBase, io.BufferedReader]:
    """The decompressed bytes of a plain, gzip or xz file, and the file under them (whose
    position is progress; the caller closes both). Another compression is an
    ImportFormatError naming it and ``formats``, what the caller reads."""
    kind = compression(path)
    if kind not in (None, "gzip", "xz"):
        raise ImportFormatError(f"{path} is {kind}-compressed; use {formats}")
    try:
        raw = open(path, "rb")  # noqa: SIM115 - the caller closes it
    except OSError as e:
        raise ImportFormatError(f"cannot read {path}: {e.strerror or e}") from e
    if kind == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb"), raw
    if kind == "xz":
        return lzma.LZMAFile(raw), raw
    return raw, raw


def damaged(path: Path, after: str, why: object, kept: str = "") -> ImportFormatError:
    """The error for data that ends early or is corrupt; ``after`` is the last part read
    whole ("line 12"), so the user knows how much came through; ``kept``: what the caller
    kept of it, when it keeps any."""
    return ImportFormatError(
        f"{path} is truncated or corrupt after {after}: {why}" + (f"; {kept}" if kept else "")
    )


def numbered_lines(
    stream: Iterable[bytes], path: Path, kept: str = ""
) -> Iterator[tuple[int, bytes]]:
    """(line number from 1, line) of a byte stream; damage under it is ``damaged``, naming
    the last line read (after yielding every line before the damage) and ``kept``."""
    lines = iter(stream)
    n = 0
    while True:
        try:
            line = next(lines)
        except StopIteration:
            return
        except DAMAGE as e:
            raise damaged(path, f"line {n}", e, kept) from e
        n += 1
        yield n, line
