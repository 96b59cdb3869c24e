"""``au:`` through researcher identities: a typed name normalised as identities normalise it.

A user may type a name the way papers spell it or the way bibliographies do: ``Balázs Kégl``,
``B\\'alazs K\\'egl``, ``KEGL``, ``Kégl, B.``. :func:`rewrite_author_clauses` settles TeX
accents and the "Surname, Given" order in the raw query, before the query parser would
drop the backslashes and commas; :func:`author_clause` then turns the clause into a Tantivy
query string that matches the name as a phrase (as before) or any researcher whose name is
compatible with it (``papersift.core.names``), so every spelling an identity joined is found too.
"""

from __future__ import annotations

import re

from papersift.core.authors import decode_tex, normalise_name
from papersift.core.names import NameParts, compatible, split_name
from papersift.engine.people import papers_of_any
from papersift.engine.store import PaperStore

# An au: value in the raw query; a backslash escapes the next character, so the TeX
# umlaut ``G\"odel`` stays inside its phrase.
_AU_VALUE = re.compile(
    r"(?<![\w])(?P<field>au|authors?):"
    r'(?:"(?P<phrase>(?:\\.|[^"\\])*)"?|(?P<word>(?:\\.|[^\s"\\])+))',
    re.IGNORECASE,
)
_SUFFIXES = frozenset({"jr", "jnr", "sr", "snr", "ii", "iii", "iv"})
MAX_RESEARCHERS = 5000  # researchers one au: clause may expand to
MAX_PAPERS = 50_000  # papers it may expand to; beyond, the phrase alone


def author_text(text: str) -> str:
    """``Kégl, B.`` -> ``B. Kégl``; ``B\\'alazs K\\'egl`` -> ``Balázs Kégl``."""
    if "\\" in text or "{" in text:
        text = decode_tex(text)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) == 2 and all(parts):
        text = f"{parts[1]} {parts[0]}"
    elif len(parts) == 3 and all(parts) and normalise_name(parts[2]) in _SUFFIXES:
        text = f"{parts[1]} {parts[0]} {parts[2]}"  # "Smith, John, Jr."
    return " ".join(text.replace('"', " ").split())


def name_key(text: str) -> str:
    """The identity key of a name as a person types it (``Kégl, Balázs`` -> ``balazs kegl``)."""
    return normalise_name(author_text(text))


def rewrite_author_clauses(query: str) -> str:
    """The raw query with each ``au:`` value in the order and characters papers use."""
    if ":" not in query:
        return query

    def fix(m: re.Match[str]) -> str:
        value = m.group("phrase") if m.group("phrase") is not None else m.group("word")
        fixed = author_text(value)
        if fixed == value:
            return m.group(0)
        return f'{m.group("field")}:"{fixed}"'

    return _AU_VALUE.sub(fix, query)


def _reaches(query: NameParts, key: NameParts) -> bool:
    """A spelled-out first name reaches compatible spelled-out names (``John Smith`` ->
    ``John A. Smith``), initials reach every compatible name (``J. Smith`` -> ``John
    Smith``); initials-only spellings of a full name are reached only through identities."""
    if not key.given or not compatible(query, key):
        return False
    return len(query.given[0]) == 1 or len(key.given[0]) > 1


def surname_first(parts: NameParts) -> NameParts | None:
    """``Lariviere V`` read as bibliographies write it, initials last (``V Lariviere``);
    None unless the name is one word of two letters or more followed by initials only."""
    first, *rest = parts.key.split()
    if not rest or len(first) < 2 or any(len(t) > 1 for t in rest):
        return None
    return split_name(" ".join([*rest, first]))


def compatible_researchers(store: PaperStore, text: str) -> list[int]:
    """Researchers with an authorship whose name the typed name reaches; [] for a surname
    alone or a collaboration (those stay plain word matches). A name that reaches nobody
    as typed is tried with its trailing initials first (``surname_first``): a query's
    comma is gone before the researcher cards look the name up (``Lariviere, V.``)."""
    parts = split_name(normalise_name(text))
    if parts.collective or not parts.given:
        return []
    rids = _reached(store, parts)
    flipped = None if rids else surname_first(parts)
    return _reached(store, flipped) if flipped is not None else rids


def _reached(store: PaperStore, parts: NameParts) -> list[int]:
    with store.reading() as db:  # the identity tables (engine.people) exist: DataDir made them
        rows = db.execute(
            "SELECT DISTINCT key, rid FROM authorships WHERE block = ? AND rid IS NOT NULL",
            (parts.block,),
        ).fetchall()
    rids = {int(rid) for key, rid in rows if _reaches(parts, split_name(str(key)))}
    return sorted(rids)[:MAX_RESEARCHERS]


def author_clause(store: PaperStore, text: str, sign: str = "") -> str:
    """The Tantivy query string of one ``au:`` clause: the phrase, or a researcher of a
    compatible name."""
    value = " ".join(text.replace("\\", " ").replace('"', " ").split())
    phrase = f'au:"{value}"'
    docids = papers_of_any(store, compatible_researchers(store, value))
    if not docids or len(docids) > MAX_PAPERS:
        return f"{sign}{phrase}"
    return f"{sign}({phrase} key: IN [{' '.join(map(str, docids))}])"
