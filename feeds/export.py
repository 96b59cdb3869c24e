"""Result lists as reference-manager files: BibTeX, RIS and CSL-JSON (pure transforms on
:class:`Paper`, as the feeds are).

Each format is written by a well-kept library of its own where PyPI has one: BibTeX by
bibtexparser 2 (entries in the form arXiv suggests: ``@misc`` with ``eprint``,
``archivePrefix`` and ``primaryClass``), RIS by rispy; CSL-JSON is plain JSON (the schema
of citeproc, Zotero and pandoc). BibTeX titles stay TeX as arXiv gives them (TeX is BibTeX's
own markup), with braces balanced; RIS and CSL-JSON, which have no markup, get the text as
Unicode (``\\'Etude`` -> ``Étude``, ``$\\alpha$`` -> ``α``), as the feeds do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import rispy
from bibtexparser import model
from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library

from papersift.core.paper import Paper
from papersift.core.tex import ascii_words, plain_text

ARXIV_ABS = "https://arxiv.org/abs/"
# format -> (media type, file extension)
EXPORT_FORMATS: dict[str, tuple[str, str]] = {
    "bibtex": ("application/x-bibtex; charset=utf-8", "bib"),
    "ris": ("application/x-research-info-systems; charset=utf-8", "ris"),
    "csl-json": ("application/vnd.citationstyles.csl+json; charset=utf-8", "json"),
}


def balanced(text: str) -> str:
    """``text`` on one line with its braces balanced (unmatched closing ones dropped,
    missing ones added), as a BibTeX field needs; a trailing backslash would escape the
    field's closing brace, so it goes."""
    depth, out = 0, []
    for ch in " ".join(text.split()).rstrip("\\"):
        if ch == "{":
            depth += 1
        elif ch == "}":
            if depth == 0:
                continue
            depth -= 1
        out.append(ch)
    return "".join(out) + "}" * depth


_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")


def tex_field(text: str) -> str:
    """``balanced``, with a bare ``%``, ``&`` or ``#`` escaped: TeX reads them as a comment,
    a table cell and a macro parameter, and some arXiv titles have them as plain text
    ("Arts & Humanities")."""
    return _BARE_SPECIAL.sub(r"\\\1", balanced(text))


def bibtex_fields(p: Paper) -> list[tuple[str, str]]:
    """The fields of a paper's ``@misc`` entry, in the form arXiv itself suggests."""
    fields = [
        ("title", "{" + tex_field(p.title) + "}"),
        ("author", " and ".join(tex_field(a.name) for a in p.authors) or "Anonymous"),
        ("year", str(p.published.year)),
        ("eprint", p.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", p.primary_category),
        ("url", ARXIV_ABS + p.arxiv_id),
    ]
    if p.doi:
        fields.append(("doi", balanced(p.doi)))
    if p.journal_ref:
        fields.append(("note", tex_field(p.journal_ref)))
    return fields


def bibtex_key(paper: Paper) -> str:
    """``<first author's surname><year><first word of 4+ letters>``, in ASCII letters read
    from the names and the title with their TeX and accents (``Soubeyran``, 2019,
    ``Biblioth\\`eque ...`` -> ``soubeyran2019bibliotheque``)."""
    surname = paper.authors[0].name.split()[-1] if paper.authors else ""
    last = _NOT_LETTER.sub("", "".join(ascii_words(surname))) or "arxiv"
    words = _KEY_WORD.findall(" ".join(ascii_words(paper.title)))
    return f"{last}{paper.published.year}{words[0] if words else 'paper'}"


_KEY_WORD = re.compile(r"[a-z]{4,}")
_NOT_LETTER = re.compile(r"[^a-z]")


def _unique_keys(papers: Sequence[Paper]) -> list[str]:
    """One key per paper; repeats get a, b, c... as reference managers do."""
    seen: dict[str, int] = {}
    keys = []
    for p in papers:
        key = bibtex_key(p)
        n = seen.get(key, 0)
        seen[key] = n + 1
        keys.append(key if n == 0 else f"{key}{_suffix(n)}")
    return keys


def _suffix(n: int) -> str:
    letters = ""
    while n > 0:
        n, r = divmod(n - 1, 26)
        letters = chr(ord("a") + r) + letters
    return letters


def to_bibtex(papers: Sequence[Paper]) -> str:
    library = Library()
    for key, p in zip(_unique_keys(papers), papers, strict=True):
        fields = bibtex_fields(p)
        library.add(model.Entry("misc", key, [model.Field(k, v) for k, v in fields]))
    text: str = write_string(library)
    return text


class _Ris(rispy.RisWriter):  # type: ignore[misc]  # rispy is untyped
    """rispy's RIS writer without the ``1.``, ``2.`` lines it puts before each record (not
    part of the format)."""

    def set_header(self, count: int) -> str:
        return ""


def to_ris(papers: Sequence[Paper]) -> str:
    records = []
    for p in papers:
        rec: dict[str, object] = {
            "type_of_reference": "JOUR" if p.journal_ref else "GEN",
            "title": plain_text(p.title),
            "authors": [_ris_name(a.name) for a in p.authors],
            "year": str(p.published.year),
            "date": p.published.strftime("%Y/%m/%d"),
            "abstract": plain_text(p.abstract),
            "urls": [ARXIV_ABS + p.arxiv_id],
            "publisher": "arXiv",
            "id": f"arXiv:{p.arxiv_id}",
            "keywords": list(p.categories),
        }
        if p.doi:
            rec["doi"] = p.doi
        if p.journal_ref:
            rec["journal_name"] = plain_text(p.journal_ref)
        records.append(rec)
    text: str = rispy.dumps(records, implementation=_Ris)
    return text


def _ris_name(name: str) -> str:
    """RIS wants ``Surname, Given``."""
    parts = name.split()
    return f"{parts[-1]}, {' '.join(parts[:-1])}" if len(parts) > 1 else name


def csl_item(p: Paper) -> dict[str, object]:
    """One CSL-JSON item: CSL 1.0.2's type ``article`` is a preprint."""
    names = []
    for a in p.authors:
        parts = a.name.split()
        if len(parts) > 1:
            names.append({"family": parts[-1], "given": " ".join(parts[:-1])})
        else:
            names.append({"literal": a.name})
    item: dict[str, object] = {
        "id": f"arXiv:{p.arxiv_id}",
        "type": "article",
        "title": plain_text(p.title),
        "author": names,
        "issued": {"date-parts": [[p.published.year, p.published.month, p.published.day]]},
        "abstract": plain_text(p.abstract),
        "URL": ARXIV_ABS + p.arxiv_id,
        "number": p.arxiv_id,
        "publisher": "arXiv",
        "keyword": ", ".join(p.categories),
    }
    if p.doi:
        item["DOI"] = p.doi
    if p.journal_ref:
        item["container-title"] = plain_text(p.journal_ref)
    return item


def to_csl_json(papers: Sequence[Paper]) -> str:
    return json.dumps([csl_item(p) for p in papers], ensure_ascii=False, indent=1) + "\n"


_WRITERS = {"bibtex": to_bibtex, "ris": to_ris, "csl-json": to_csl_json}


def render_export(papers: Sequence[Paper], fmt: str) -> tuple[str, str, str]:
    """``papers`` in format ``fmt`` (a key of ``EXPORT_FORMATS``): the text, its media type
    and the file extension. Raises ValueError for an unknown format."""
    if fmt not in _WRITERS:
        raise ValueError(f"unknown export format {fmt!r}; known: {', '.join(EXPORT_FORMATS)}")
    media, ext = EXPORT_FORMATS[fmt]
    return _WRITERS[fmt](papers), media, ext
