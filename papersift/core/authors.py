"""Split an arXiv author string into ordered authors and normalise their names."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from papersift.core.accents import strip_accents
from papersift.core.paper import Author

__all__ = ["is_affiliation", "normalise_name", "parse_authors"]

# Innermost parenthetical; removed repeatedly so "((1) MIT, (2) CERN)" goes too.
_PARENS = re.compile(r"\s*\([^()]*\)")
# Affiliation superscripts written in TeX: "Smith$^{1,2}$", "Smith^{a}".
_SUPERSCRIPT = re.compile(r"\$\^\{?[^$]*\}?\$|\^\{[^}]*\}")
# Affiliation numbers glued to a name: "Pingxing Chen1, ...".
_GLUED_DIGITS = re.compile(r"(?<=[^\W\d_]{2})\d+(?:,\d+)*(?=\s*(?:[,;]|\band\b|$))")
_TAG = re.compile(r"<[^>]*>")  # "<br>" in a few harvested records
_DIGIT = re.compile(r"\d")
_ET_AL = re.compile(r"\bet\.?\s*al\b\.?|\band others\b", re.IGNORECASE)
# Author separators: comma, semicolon, "and" (also ", and" and TeX's "\and"), " & ",
# and "on behalf of" in "K. Nishimura on behalf of the Belle II Group".
_SPLIT = re.compile(r"[,;]|\\and\b|\band\b|\s&\s|\son behalf of\s")
_LEAD = re.compile(r"^(?:for|on behalf of)\s+(?:the\s+)?", re.IGNORECASE)
_SUFFIX = re.compile(r"(?i:jr|sr|jnr|snr)\.?|II|III|IV")
_LETTER = re.compile(r"[^\W\d_]")
_INITIAL_DASH = re.compile(r"(?<=\.) -(?=\w)")  # authors_parsed writes "C.-P." as "C. -P."

_NON_ALNUM = re.compile(r"[\W_]+")
# Words that make an author-list piece an organisation (capitalised, whole words).
_ORGANISATION = re.compile(
    r"\b(?:Universit(?:y|ät|é|à|eit|ad|at)|Univ\.|Institut(?:e|o)?|Istituto|Department|Dept\."
    r"|Laborator(?:y|ies|ium|io)|Laboratoire|Labs?|Corporation|Corp\.|Inc\.|Ltd\.?|GmbH"
    r"|College|School|Faculty|Cent(?:er|re)|Hospital|Academy|Research|Observatory"
    r"|Polytechnic|Politecnico)(?![\w-])"
)
_COUNTRIES = frozenset((
    "Japan", "China", "India", "Korea", "Taiwan", "Singapore", "Germany", "France", "Italy",
    "Spain", "Portugal", "Netherlands", "Belgium", "Switzerland", "Austria", "Sweden", "Norway",
    "Denmark", "Finland", "Poland", "Russia", "Ukraine", "Greece", "Turkey", "Israel", "Iran",
    "Egypt", "Brazil", "Argentina", "Chile", "Mexico", "Canada", "USA", "U.S.A.", "UK", "U.K.",
    "Australia",
))  # fmt: skip
_NUMBER_WORD = re.compile(r"(?<![\w])\d")  # a word that starts with a digit: "11794-3651", "T-13"
_EDGE_NUMBER = re.compile(r"^\d+(?:[,\s]+\d+)*\s*|(?:\s+\d+(?:,\d+)*)+$")
_COLLECTIVE = re.compile(
    r"\b(?:collaborations?|consortium|group|team|project|committee|collective|network)\b"
)


def normalise_name(name: str) -> str:
    """Matching key for a name: ``"Balázs Kégl"`` -> ``"balazs kegl"``, ``"C.-P. Yuan"``
    -> ``"c p yuan"``; a leading "the" of a collaboration is dropped."""
    if not name.isascii():
        name = strip_accents(name)
    key = " ".join(_NON_ALNUM.sub(" ", name.casefold()).split())
    if key.startswith("the ") and _COLLECTIVE.search(key):
        key = key[4:]
    return key


def parse_authors(raw: str, parsed: Sequence[Sequence[Any]] | None = None) -> tuple[Author, ...]:
    """Ordered authors of a paper from its ``authors`` string.

    ``parsed`` is the snapshot's ``authors_parsed`` (``[last, first, suffix, ...]`` per
    author); it gives the split when its length is within a quarter (at least 2) of the
    count found in ``raw``, because arXiv resolved accents and affiliations in it.
    """
    pieces = _split(raw) if raw else []
    if parsed:
        names = _parsed_names(parsed)
        if names and abs(len(names) - len(pieces)) <= max(2, len(pieces) // 4):
            pieces = names
    authors: list[Author] = []
    after_affiliation = False
    for piece in pieces:
        name = decode_tex(piece) if "\\" in piece or "{" in piece else piece
        if _DIGIT.search(name):
            stripped = _strip_marks(name)
            if stripped != name and stripped.islower():  # "9 pages": a comment, not a name
                continue
            name = stripped
        if not name:
            continue
        if is_affiliation(name) or (after_affiliation and " " not in name):
            # "Toshiba Corporation, Saiwai-ku, Kawasaki, Japan": an address, not people; a
            # single word after an affiliation is the next part of the address.
            after_affiliation = True
            continue
        authors.append(Author(name, normalise_name(name)))
    return tuple(authors)


def _strip_marks(name: str) -> str:
    """Affiliation numbers at the edges of a name: "1 Gil Porat", "1Oumair", "Ajay Jha 1"."""
    return _EDGE_NUMBER.sub("", name).strip()


def is_affiliation(name: str) -> bool:
    """Whether an author-list piece names a place or an organisation rather than a person:
    an organisation word ("Microsoft Corporation", "Fraunhofer Institute"), a country on
    its own ("Japan"), or a number inside it ("NY 11794-3651", "9 pages"). Collaborations
    ("the D0 Collaboration", "the SOC2 team") are authors and stay."""
    if _COLLECTIVE.search(name.casefold()):
        return False
    if name in _COUNTRIES or _ORGANISATION.search(name):
        return True
    return _NUMBER_WORD.search(name) is not None


def _split(raw: str) -> list[str]:
    """Author names, still in TeX, with affiliations, "et al." and separators gone."""
    text = " ".join(raw.split())
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "(" in text or ")" in text:
        text = _drop_parentheticals(text)
    if "^" in text:
        text = _SUPERSCRIPT.sub("", text)
    if "et" in text or "others" in text:
        text = _ET_AL.sub(",", text)
    if _DIGIT.search(text):
        text = _GLUED_DIGITS.sub("", text)
    return _clean_pieces(_SPLIT.split(text))


def _drop_parentheticals(text: str) -> str:
    while True:
        stripped = _PARENS.sub("", text)
        if stripped == text:
            break
        text = stripped
    # An unclosed "(" starts an affiliation that runs to the end; a stray ")" is noise.
    return text.split("(", 1)[0].replace(")", "")


def _clean_pieces(pieces: Sequence[str]) -> list[str]:
    out: list[str] = []
    for piece in pieces:
        piece = piece.strip(" '\"`*:")
        if not piece:
            continue
        if piece[0] in "fFoO":
            piece = _LEAD.sub("", piece)
        if len(piece) <= 4 and _SUFFIX.fullmatch(piece):
            if out:  # "John Smith, Jr." is one author
                out[-1] = f"{out[-1]} {piece}"
            continue
        if piece[0].isalpha() or _LETTER.search(piece):  # drops leftovers such as "1"
            out.append(piece)
    return out


def _parsed_names(parsed: Sequence[Sequence[Any]]) -> list[str]:
    names: list[str] = []
    for entry in parsed:
        if not isinstance(entry, list | tuple):
            return []  # not the format we know: do not trust any of it
        parts = [p for p in entry[:3] if isinstance(p, str)]
        if len(parts) < 2:
            return []
        last, first, *suffix = parts
        name = " ".join(f"{first} {last} {' '.join(suffix)}".split())
        if " -" in name:
            name = _INITIAL_DASH.sub("-", name)
        if "et" in name or "others" in name:
            name = _ET_AL.sub("", name)
        names.append(name)
    return _clean_pieces(names)


_ACCENT_ESCAPED_BRACE = re.compile(r"(\\[`'^\"~=.uvHckdrb])\\\{")
_LATEX: Any = None


@lru_cache(maxsize=4096)
def decode_tex(text: str) -> str:
    r"""``Bal\'azs`` -> ``Balázs``; pylatexenc is slow, so only called on TeX-looking names."""
    global _LATEX
    if _LATEX is None:
        _LATEX = _make_latex_decoder()
    text = _ACCENT_ESCAPED_BRACE.sub(r"\1{", text.replace("%", r"\%"))  # "\v\{c}" -> "\v{c}"
    try:
        decoded = _LATEX.latex_to_text(text)
    except Exception:  # pylatexenc is lenient but not total; fall back to the raw text
        decoded = text
    decoded = decoded.replace("{", "").replace("}", "").replace("\\", "")
    return " ".join(unicodedata.normalize("NFC", decoded).split())


def _make_latex_decoder() -> Any:
    from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db

    context = get_default_latex_context_db()
    # Keep the name of an unknown macro rather than drop it: real data has typos such
    # as "Pawe\lZiń", where dropping would lose the surname.
    context.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=lambda n: n.macroname))
    return LatexNodes2Text(latex_context=context, math_mode="text")
