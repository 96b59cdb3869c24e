"""Read a BibTeX or RIS library (a Zotero export, say) and match its entries to papers here.

An entry matches by arXiv id (``eprint``, an arxiv.org URL, ``arXiv:`` in a note or journal
field), else by DOI, else by its title, compared exactly after normalising case, accents,
TeX braces and punctuation. Parsing uses bibtexparser 2.x and rispy; a block either cannot
read is reported and skipped, the rest is matched. A file that is neither, or too large,
is a :class:`BibImportError`.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from dataclasses import dataclass, field

import rispy
from bibtexparser.entrypoint import parse_string

from papersift.core.errors import PapersiftError
from papersift.engine.query import arxiv_id_in
from papersift.engine.search import SearchEngine

MAX_BYTES = 2 * 1024 * 1024
MAX_ENTRIES = 5000
_ARXIV_IN_TEXT = re.compile(
    r"(?:arxiv[:\s/]*|arxiv\.org/(?:abs|pdf)/)([a-z-]+(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(v\d+)?",
    re.I,
)
_DOI = re.compile(r"10\.\d{4,9}/\S+", re.I)
_TEX_WORD = re.compile(r"\\[A-Za-z]+")
_TEX_ACCENT = re.compile(r"\\[`'\"^~=.]")  # \'{o}: the accent goes, the letter stays


class BibImportError(PapersiftError):
    """The file is not BibTeX or RIS, is empty, or is too large: one line to show."""


@dataclass(frozen=True, slots=True)
class Entry:
    label: str  # the citation key (BibTeX) or the title, for the report
    title: str = ""
    doi: str = ""
    arxiv_id: str = ""


@dataclass(frozen=True, slots=True)
class Match:
    entry: Entry
    arxiv_id: str | None  # the paper here, or None
    how: str  # "arXiv id", "DOI", "title" or "" (no match)


@dataclass
class ImportReport:
    format: str
    matches: list[Match] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # blocks that could not be read

    @property
    def matched(self) -> list[Match]:
        return [m for m in self.matches if m.arxiv_id]


def normalise_title(text: str) -> str:
    """Lower case, no accents, TeX commands or braces, punctuation as spaces."""
    text = _TEX_ACCENT.sub("", text.replace("\\&", " and "))
    text = _TEX_WORD.sub(" ", text).replace("{", "").replace("}", "")
    text = unicodedata.normalize("NFKD", text)
    text = "".join(c for c in text if not unicodedata.combining(c)).casefold()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def _arxiv_of(*texts: str) -> str:
    for text in texts:
        if not text:
            continue
        found = arxiv_id_in(text)
        if found:
            return found
        m = _ARXIV_IN_TEXT.search(text)
        if m:
            found = arxiv_id_in(m.group(1))
            if found:
                return found
    return ""


def _doi_of(text: str) -> str:
    m = _DOI.search(text or "")
    return m.group(0).rstrip(".,;").lower() if m else ""


def parse_library(data: bytes, filename: str = "") -> tuple[str, list[Entry], list[str]]:
    """(format, entries, skipped blocks) of a BibTeX or RIS file."""
    if len(data) > MAX_BYTES:
        raise BibImportError(f"the file is larger than {MAX_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise BibImportError("the file is not UTF-8 text (export BibTeX or RIS as UTF-8)") from None
    head = text.lstrip()[:200]
    if filename.lower().endswith(".ris") or re.match(r"TY {2}- ", head):
        entries, skipped = _ris(text)
        fmt = "RIS"
    elif head.startswith("@") or "@" in head or filename.lower().endswith(".bib"):
        entries, skipped = _bibtex(text)
        fmt = "BibTeX"
    else:
        raise BibImportError("the file is neither BibTeX (@article{...}) nor RIS (TY  - ...)")
    if not entries:
        why = f"; {len(skipped)} unreadable blocks" if skipped else ""
        raise BibImportError(f"the {fmt} file holds no entries{why}")
    if len(entries) > MAX_ENTRIES:
        raise BibImportError(f"the file holds {len(entries):,} entries; at most {MAX_ENTRIES:,}")
    return fmt, entries, skipped


def _bibtex(text: str) -> tuple[list[Entry], list[str]]:
    quiet = logging.getLogger("bibtexparser")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # it warns once per bad block; the report says it instead
    try:
        lib = parse_string(text)
    finally:
        quiet.setLevel(level)
    entries = []
    for e in lib.entries:
        f = {k.lower(): str(fld.value) for k, fld in e.fields_dict.items()}
        eprint = f.get("eprint", "")
        prefix = f.get("archiveprefix", f.get("eprinttype", "arxiv")).lower()
        where = ("url", "journal", "note", "howpublished")
        arxiv = _arxiv_of(eprint if "arxiv" in prefix else "", *(f.get(k, "") for k in where))
        doi = _doi_of(f.get("doi", "")) or ("" if arxiv else _doi_of(f.get("url", "")))
        entries.append(Entry(e.key, f.get("title", ""), doi, arxiv))
    skipped = [f"line {(b.start_line or 0) + 1}: not a readable entry" for b in lib.failed_blocks]
    return entries, skipped


def _ris(text: str) -> tuple[list[Entry], list[str]]:
    try:
        records = rispy.loads(text)
    except Exception as exc:  # rispy raises plain IOError/ValueError subclasses on bad tags
        raise BibImportError(f"the RIS file could not be read: {str(exc)[:200]}") from None
    entries = []
    for r in records:
        title = str(r.get("title") or r.get("primary_title") or "")
        urls = [str(u) for u in r.get("urls", []) or []]
        arxiv = _arxiv_of(*urls, str(r.get("notes", "")), str(r.get("journal_name", "")))
        doi = _doi_of(str(r.get("doi", "")))
        entries.append(Entry(title[:80] or "(untitled)", title, doi, arxiv))
    return entries, _unclosed_ris(text)


def _unclosed_ris(text: str) -> list[str]:
    """Records with no ``ER  -`` line, which rispy drops (the last) or merges with the next.

    Follows rispy's reading: outside a record a line starting ``TY`` opens one; inside, only
    a ``TY  -`` or ``ER  -`` tag line counts.
    """
    notes: list[str] = []
    start = 0  # the line that opened the current record, 0 outside one
    for n, line in enumerate(text.split("\n"), 1):
        tag = line[:2] if line[2:5] == "  -" else ""
        if not start:
            start = n if line.startswith("TY") else 0
        elif tag == "ER":
            start = 0
        elif tag == "TY":
            notes.append(f"line {start}: no closing 'ER  -' line; read as one entry with line {n}")
            start = n
    if start:
        notes.append(f"line {start}: no closing 'ER  -' line (file cut short?); entry skipped")
    return notes


def match_entries(engine: SearchEngine, entries: list[Entry]) -> list[Match]:
    """Each entry's paper here, if any, and how it was found."""
    dois = {e.doi for e in entries if e.doi and not e.arxiv_id}
    by_doi = _papers_by_doi(engine, dois) if dois else {}
    out = []
    for e in entries:
        if e.arxiv_id and engine.paper(e.arxiv_id) is not None:
            out.append(Match(e, e.arxiv_id, "arXiv id"))
        elif e.doi in by_doi:
            out.append(Match(e, by_doi[e.doi], "DOI"))
        elif (found := _by_title(engine, e.title)) is not None:
            out.append(Match(e, found, "title"))
        else:
            out.append(Match(e, None, ""))
    return out


def _papers_by_doi(engine: SearchEngine, dois: set[str]) -> dict[str, str]:
    """arXiv ids by lower-cased DOI (one pass over the papers that have one)."""
    store = engine.data.store
    docids = {doi.lower(): d for d, doi in store.dois() if doi.lower() in dois}
    papers = store.get(list(docids.values()))
    return {doi: papers[d].arxiv_id for doi, d in docids.items() if d in papers}


def _by_title(engine: SearchEngine, title: str) -> str | None:
    want = normalise_title(title)
    if len(want) < 8:  # "Notes", "Intro": too short to say which paper
        return None
    lex = engine.data.lexical
    query, errors = lex.parse(f'ti:"{want}"')
    if errors:
        return None
    docids, _, _ = lex.search(query, 20)
    for paper in engine.data.store.get(docids).values():
        if normalise_title(paper.title) == want:
            return paper.arxiv_id
    return None
