"""The user's query syntax, parsed leniently into a safe Tantivy query string.

Supported: plain words, "phrases", ``+must``, ``-exclude`` (and ``NOT word``), fielded
``ti:``, ``au:``, ``abs:``, ``cat:`` (with long aliases), the citation filters ``cites:<id>``
(papers citing that paper) and ``citedby:<id>`` (papers it cites), ``x OR y`` (either clause) and
``x AND y`` (both required). Every value is re-quoted before it reaches Tantivy, so no input
can trip its grammar; what we drop is reported as a warning. A clause to require or exclude
that holds only stop words is left out (``ParsedQuery.ignored``; ``engine.match`` says so), as
Lucene leaves out a clause its analyser empties. An arXiv id or arXiv URL as the
whole query is recognised for a direct lookup. Which papers a parsed query *matches* is
decided by ``engine.match``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from papersift.core.accents import accented
from papersift.core.paper import parse_arxiv_id
from papersift.engine.lexical_schema import STOP_WORDS

FIELD_ALIASES = {
    "ti": "ti", "title": "ti",
    "au": "au", "author": "au", "authors": "au",
    "abs": "abs", "abstract": "abs",
    "cat": "cat", "category": "cat",
    "cites": "cites", "citedby": "citedby",
}  # fmt: skip
# A pasted web address other than arXiv's (its scheme reads as a field name, "https:").
WEB_ADDRESS = (
    "a web address was searched as its words; an arXiv or doi.org address, an arXiv id or "
    "a DOI goes straight to its paper"
)
# Fields whose value is kept as written: a category, an arXiv id ("hep-th/9901001v2").
RAW_FIELDS = frozenset({"cat", "cites", "citedby"})

# A sign is an operator only before a letter or a quote: "-2", "+1" and "-5%" are text.
_TOKEN = re.compile(
    r'(?P<sign>[+-](?=[^\W\d_]|"))?(?:(?P<field>[A-Za-z]+):)?'
    r'(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))'
)
# ``arXiv:ID`` or an abs/pdf URL, with or without its scheme (as copied from an address bar).
_ARXIV_URL = re.compile(
    r"^(?:arxiv:|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)(?P<id>.+?)(?:\.pdf)?/?$",
    re.IGNORECASE,
)
# An old-style id in any case (``CMP-LG/9405001``, ``math.ag/0601001``): arXiv writes the
# archive in lower case and a subject class in upper case.
_OLD_ANY_CASE = re.compile(r"^([A-Za-z][A-Za-z-]*)(\.[A-Za-z]{2})?(/\d{7}(?:[vV]\d+)?)$")
_WORD = re.compile(r"\w+")
_BARE_FIELD = re.compile(r"([A-Za-z]+):")  # a field name with nothing after it
_WORDISH = re.compile(r"[^\w.'’-]+")  # punctuation that is not part of a term
# Query-language syntax of other engines (wildcards, fuzzy, boosts, ranges, boolean symbols)
# that we drop: worth a warning. Ordinary punctuation (a full stop, a comma, brackets) is not.
_SYNTAX = frozenset("*~^[]{}\\|&!<>=")
# Other engines' boost and fuzzy/proximity marks at the end of a word or phrase ("graph^5",
# "bert~2", '"deep learning"~3'): dropped whole, number and all, not searched as text. Not
# after a single letter or a digit, which is mathematics ("L^2", "n^2", "N~100", "10^5"),
# nor inside a phrase ('"L^2 norm"').
_MODIFIER = re.compile(r'(?:(?<=[^\W\d_]{2})|(?<="))[\^~]\d*(?:\.\d+)?(?=[\s)\]}]|$)')
# A quote escaped as other engines escape it (\"deep learning\"), not a TeX umlaut (Schr\"odinger,
# where a letter comes before): a quote.
_ESCAPED_QUOTE = re.compile(r'(?<![^\W\d_])\\"(?!\{)')


@dataclass(frozen=True, slots=True)
class Clause:
    sign: str  # "+", "-" or ""
    field: str | None  # canonical field name or None for the default fields
    text: str
    phrase: bool
    group: int = 0  # clauses joined by OR share a group; every other clause has its own
    # The word's other spellings, which it also matches ("Schrödinger" for "Schroedinger":
    # ``engine.umlauts``); what the model reads and a title phrase are the text as typed.
    also: tuple[str, ...] = ()

    @property
    def free(self) -> bool:
        """A free-text clause: unsigned and unfielded (subject to minimum-should-match)."""
        return not self.sign and self.field is None

    @property
    def common(self) -> bool:
        """Only stop words, in fields whose analyser drops them (titles and abstracts; the
        default fields add authors, where "To" or "A." may be a name, so a free clause of
        them still scores there, ``engine.match``)."""
        return _common(self.field, self.text)

    def tantivy_string(self, categories: dict[str, str] | None = None) -> str:
        """This clause re-quoted for Tantivy, without its sign. ``categories`` maps
        lowercased category names to their case."""
        value = self.text.replace("\\", " ").replace('"', " ")
        if self.field == "cat":
            name = (categories or {}).get(value.lower(), value)
            target = "cat" if "." in name else "arch"
            return f'{target}:"{name}"'
        prefix = f"{self.field}:" if self.field else ""
        return " ".join(f'{prefix}"{w}"' for w in self.parts())

    def parts(self) -> list[str]:
        """The quoted units Tantivy gets. An unsigned, unquoted hyphenated word is its parts,
        as in Lucene's query parser (no automatic phrase): "IL-10" finds papers that write
        "IL 10". Where a match must hold the word it holds every part, or the parts together
        ("GPT-4"); in a longer query either part counts (``engine.hyphens``). As one phrase
        everywhere it cost SciFact keyword nDCG@10 0.013 (0.6472 -> 0.6605)."""
        value = self.text.replace("\\", " ").replace('"', " ")
        words = value.split("-") if not (self.sign or self.phrase) else [value]
        return [w for w in words if w.strip()]


@dataclass(frozen=True, slots=True)
class ParsedQuery:
    clauses: tuple[Clause, ...]
    warnings: tuple[str, ...] = field(default=())
    # Clauses to require or exclude that hold only stop words ("NOT the", "+a", "ti:the",
    # "x AND the"): left out, as Lucene's query parser leaves out a clause its analyser
    # turns into nothing: required, one would match nothing; excluded, exclude nothing.
    ignored: tuple[Clause, ...] = field(default=())

    @property
    def empty(self) -> bool:
        """Nothing was asked: browse. A query of ignored clauses alone asked for something."""
        return not self.clauses and not self.ignored

    @property
    def only_negative(self) -> bool:
        return bool(self.clauses) and all(c.sign == "-" for c in self.clauses)

    @property
    def semantic_text(self) -> str:
        """What the embedding model should read: the positive free-text parts."""
        return " ".join(
            c.text for c in self.clauses if c.sign != "-" and c.field in (None, "ti", "abs")
        ).strip()

    @property
    def all_text(self) -> str:
        """Every clause's text, excluded and fielded ones too: each word a keyword query
        built from this one can hold (``engine.hits`` highlights by it)."""
        return " ".join(w for c in self.clauses for w in (c.text, *c.also))

    def groups(self) -> list[tuple[Clause, ...]]:
        """The clauses by OR group, in query order."""
        out: dict[int, list[Clause]] = {}
        for c in self.clauses:
            out.setdefault(c.group, []).append(c)
        return [tuple(g) for g in out.values()]


def query_units(query: str) -> list[str]:
    """The query's units as typed, as the parser splits it: each signed or fielded word or
    "phrase", and the operators AND, OR and NOT."""
    return [m.group(0) for m in _TOKEN.finditer(query)]


def arxiv_id_in(query: str) -> str | None:
    """The arXiv id if the whole query is one (bare, ``arXiv:``-prefixed or an arXiv URL)."""
    text = query.strip()
    m = _ARXIV_URL.match(text)
    if m:
        text = m.group("id")
    if old := _OLD_ANY_CASE.match(text):
        text = old.group(1).lower() + (old.group(2) or "").upper() + old.group(3).lower()
    parsed = parse_arxiv_id(text)
    return parsed[0] if parsed else None


def parse_user_query(query: str) -> ParsedQuery:
    """Split the query into clauses; never raises."""
    clauses: list[Clause] = []
    ignored: list[Clause] = []
    warnings: list[str] = []
    # A title pasted from arXiv's metadata: Schr\"odinger as the index reads it.
    query = accented(_ESCAPED_QUOTE.sub('"', query))
    if query.count('"') % 2:
        warnings.append("an unclosed quote was closed at the end of the query")
    negate_next = False
    joiner = ""  # "AND" or "OR" between the previous clause and the next
    after_ignored = False  # the last clause was ignored: an AND/OR after it goes with it
    query, marks = _drop_modifiers(query)
    if marks:
        shown = ", ".join(repr(m) for m in dict.fromkeys(marks))
        warnings.append(f"ignored {shown} (query syntax: boosts and fuzzy marks)")
    for m in _TOKEN.finditer(query):
        sign = m.group("sign") or ""
        fname = m.group("field")
        phrase = m.group("phrase")
        text = phrase if phrase is not None else m.group("word")
        if text is None:
            continue
        canonical: str | None = None
        bare = _BARE_FIELD.fullmatch(text) if fname is None and phrase is None else None
        if bare and bare.group(1).lower() in FIELD_ALIASES:  # "au:" alone, or "au: name"
            warnings.append(f"'{text}' has no value (write {text}VALUE, no space); it was ignored")
            continue
        if fname is not None:
            canonical = FIELD_ALIASES.get(fname.lower())
            if canonical is None and fname.lower() in ("http", "https") and text[:2] == "//":
                warnings.append(WEB_ADDRESS)
                text = f"{fname} {text}"
            elif canonical is None:
                warnings.append(f"unknown field '{fname}:' was searched as text")
                text = f"{fname} {text}"
        if phrase is None and canonical is None and sign == "" and text in ("AND", "OR", "NOT"):
            if text == "NOT":
                negate_next = True
            elif clauses and not after_ignored:
                joiner = text
            continue
        if negate_next:
            sign, negate_next = "-", False
        if canonical not in RAW_FIELDS:
            cleaned = _WORDISH.sub(" ", text).strip(" .'’-")
            if cleaned != text.strip() and phrase is None:
                dropped = "".join(sorted((set(text) - set(cleaned)) & _SYNTAX))
                if dropped:
                    warnings.append(f"ignored the characters {dropped!r} (query syntax)")
            text = " ".join(cleaned.split())
        else:
            text = text.strip()
        if not text:
            if fname is not None:
                warnings.append(f"'{fname}:' has no value; it was ignored")
            continue
        common = _common(canonical, text)
        if common and (sign or canonical is not None or joiner == "AND"):
            # To require or exclude: left out, with the operator before it.
            ignored.append(Clause(sign or "+", canonical, text, phrase is not None))
            joiner, after_ignored = "", True
            continue
        after_ignored = False
        group = len(clauses)
        if joiner == "OR" and not sign and not clauses[-1].sign:
            group = clauses[-1].group
        elif joiner == "OR":
            warnings.append("'OR' next to a +/- clause was ignored")
        elif joiner == "AND":  # both sides required, whatever minimum-should-match says
            last = clauses[-1]
            if not last.sign and not last.common and _alone(clauses, last.group):
                clauses[-1] = replace(last, sign="+")
            sign = sign or "+"
        joiner = ""
        # Built once (dataclasses.replace per clause tripled the parse: 40 -> 134 us).
        clauses.append(Clause(sign, canonical, text, phrase is not None, group))
    if negate_next:
        warnings.append("'NOT' at the end of the query was ignored")
    if joiner:
        warnings.append(f"'{joiner}' at the end of the query was ignored")
    return ParsedQuery(tuple(clauses), tuple(dict.fromkeys(warnings)), tuple(ignored))


def _drop_modifiers(query: str) -> tuple[str, list[str]]:
    """The query without the boost and fuzzy marks outside phrases, and the marks."""
    if "^" not in query and "~" not in query:
        return query, []
    marks: list[str] = []

    def drop(m: re.Match[str]) -> str:
        if query.count('"', 0, m.start()) % 2:  # inside a phrase: text
            return m[0]
        marks.append(m[0])
        return ""

    return _MODIFIER.sub(drop, query), marks


def _common(field: str | None, text: str) -> bool:
    """``Clause.common`` of a clause of ``field`` and ``text``."""
    if field not in (None, "ti", "abs"):
        return False
    low = text.lower()
    if low.isalnum():  # one word, the usual clause
        return low in STOP_WORDS
    words = _WORD.findall(low)
    return bool(words) and all(w in STOP_WORDS for w in words)


def _alone(clauses: list[Clause], group: int) -> bool:
    return sum(c.group == group for c in clauses) == 1
