"""The user's query syntax, parsed leniently into a safe Tantivy query string.

Supported: plain words, "phrases", ``+must``, ``-exclude`` (and ``NOT word``), fielded
``ti:``, ``au:``, ``abs:``, ``cat:`` (with long aliases). Every value is re-quoted before it
reaches Tantivy, so no input can trip its grammar; what we drop is reported as a warning.
An arXiv id or arXiv URL as the whole query is recognised for a direct lookup.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from papersift.paper import parse_arxiv_id

FIELD_ALIASES = {
    "ti": "ti", "title": "ti",
    "au": "au", "author": "au", "authors": "au",
    "abs": "abs", "abstract": "abs",
    "cat": "cat", "category": "cat",
}  # fmt: skip

# A sign is an operator only before a letter or a quote: "-2", "+1" and "-5%" are text.
_TOKEN = re.compile(
    r'(?P<sign>[+-](?=[^\W\d_]|"))?(?:(?P<field>[A-Za-z]+):)?'
    r'(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))'
)
_ARXIV_URL = re.compile(
    r"^(?:arxiv:|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)(?P<id>.+?)(?:\.pdf)?/?$",
    re.IGNORECASE,
)
_WORDISH = re.compile(r"[^\w.'’-]+")  # punctuation that is not part of a term
# Query-language syntax of other engines (wildcards, fuzzy, boosts, ranges, boolean symbols)
# that we drop: worth a warning. Ordinary punctuation (a full stop, a comma, brackets) is not.
_SYNTAX = frozenset("*~^[]{}\\|&!<>=")


@dataclass(frozen=True, slots=True)
class Clause:
    sign: str  # "+", "-" or ""
    field: str | None  # canonical field name or None for the default fields
    text: str
    phrase: bool


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    clauses: tuple[Clause, ...]
    warnings: tuple[str, ...] = field(default=())

    @property
    def empty(self) -> bool:
        return not self.clauses

    @property
    def only_negative(self) -> bool:
        return bool(self.clauses) and all(c.sign == "-" for c in self.clauses)

    @property
    def semantic_text(self) -> str:
        """What the embedding model should read: the positive free-text parts."""
        return " ".join(
            c.text for c in self.clauses if c.sign != "-" and c.field in (None, "ti", "abs")
        ).strip()

    def tantivy_string(self, categories: dict[str, str] | None = None) -> str:
        """Re-quoted query for Tantivy. ``categories`` maps lowercased names to their case."""
        parts = []
        for c in self.clauses:
            value = c.text.replace("\\", " ").replace('"', " ")
            if c.field == "cat":
                name = (categories or {}).get(value.lower(), value)
                target = "cat" if "." in name else "arch"
                parts.append(f'{c.sign}{target}:"{name}"')
            else:
                prefix = f"{c.field}:" if c.field else ""
                # An unsigned, unquoted hyphenated word is its parts, each optional, as in
                # Lucene's query parser (no automatic phrase): "IL-10" finds papers that
                # write "IL 10" or only "interleukin ... 10", those with both parts first.
                # As one phrase it cost SciFact keyword nDCG@10 0.013 (0.6472 -> 0.6605).
                words = value.split("-") if not (c.sign or c.phrase) else [value]
                parts.extend(f'{c.sign}{prefix}"{w}"' for w in words if w.strip())
        return " ".join(parts)


def arxiv_id_in(query: str) -> str | None:
    """The arXiv id if the whole query is one (bare, ``arXiv:``-prefixed or an arXiv URL)."""
    text = query.strip()
    m = _ARXIV_URL.match(text)
    if m:
        text = m.group("id")
    parsed = parse_arxiv_id(text)
    return parsed[0] if parsed else None


def parse_user_query(query: str) -> ParsedQuery:
    """Split the query into clauses; never raises."""
    clauses: list[Clause] = []
    warnings: list[str] = []
    if query.count('"') % 2:
        warnings.append("an unclosed quote was closed at the end of the query")
    negate_next = False
    for m in _TOKEN.finditer(query):
        sign = m.group("sign") or ""
        fname = m.group("field")
        phrase = m.group("phrase")
        text = phrase if phrase is not None else m.group("word")
        if text is None:
            continue
        canonical: str | None = None
        if fname is not None:
            canonical = FIELD_ALIASES.get(fname.lower())
            if canonical is None:
                warnings.append(f"unknown field '{fname}:' was searched as text")
                text = f"{fname} {text}"
        if phrase is None and canonical is None and sign == "" and text in ("AND", "OR", "NOT"):
            if text == "NOT":
                negate_next = True
            else:
                warnings.append(f"'{text}' is implied; use +word to require a word")
            continue
        if negate_next:
            sign, negate_next = "-", False
        if canonical != "cat":
            cleaned = _WORDISH.sub(" ", text).strip(" .'’-")
            if cleaned != text.strip() and phrase is None:
                dropped = "".join(sorted((set(text) - set(cleaned)) & _SYNTAX))
                if dropped:
                    warnings.append(f"ignored the characters {dropped!r} (query syntax)")
            text = " ".join(cleaned.split())
        else:
            text = text.strip()
        if not text:
            continue
        clauses.append(Clause(sign, canonical, text, phrase is not None))
    if negate_next:
        warnings.append("'NOT' at the end of the query was ignored")
    return ParsedQuery(tuple(clauses), tuple(dict.fromkeys(warnings)))
