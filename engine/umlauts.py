"""Umlauts written out: "Schroedinger" finds the papers that write "Schrödinger", and
"Schrödinger" (or "Schrodinger") those that write "Schroedinger".

The index folds accents (ö is o), so Schrödinger and Schrodinger are one word to it; but
German writes an umlaut out as its vowel and an e where it has no ö, and so do many
abstracts and author lists. At 663k papers 1,042 hold "schroedinger" and 5,965
"schrodinger"; "kaehler" 337 and "kahler" 1,514; as an author "Mueller" 666 and "Muller"
1,536 (document frequencies in the ``words`` and ``au`` fields, session 37). Typing either
spelling found only its own papers.

A query word gets its other spelling (``Clause.also``), which it matches as it does its own
(as if the user had typed "Schroedinger OR Schrödinger", but still one word to the match
rules: held in one of its forms, near the other word of a two-word query), when papers
write the word with an umlaut (ä, ö, ü, or the Nordic ø): of the newest papers holding its
folded form (up to ``SAMPLE``; best matches first would be mostly authors' names, "Böhm"
for "Bohm") at least ``MIN_SHARE`` write it so, and some paper holds the spelling with the
umlaut written out. A word whose e-less form is another word is left alone: no paper writes
"dös" or "pöt" ("does", "poet"), and "Böse" is too few of the papers holding "bose" for
"Bose" to find "Boese". The verdict on a word is read once per index generation.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass, replace

import tantivy

from papersift.core.accents import accented
from papersift.engine.lexical import LexicalIndex
from papersift.engine.query import Clause, ParsedQuery
from papersift.engine.store import PaperStore

SAMPLE = 50  # papers read to see how a word is written
MIN_SHARE = 0.2  # of them, at least this share must write it with an umlaut
FIELDS = ("words", "au")  # titles and abstracts as written (folded), and author names
# A query of more words reads like a sentence and is searched as typed; this bounds the
# papers one query can have read for verdicts (each word's first: up to SAMPLE papers).
QUERY_WORDS = 8
CACHED = 4096  # words whose verdict is kept (all are forgotten when the index changes)
_WRITTEN_OUT = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ø": "oe"})
_UMLAUT_WORD = re.compile(r"\w*[äöüøÄÖÜØ]\w*")
_VOWEL_E = re.compile(r"[aou](?=e)")  # where an umlaut may be written out
_WORDS_AND_GAPS = re.compile(r"([\s-]+)")


@dataclass(frozen=True, slots=True)
class Spelling:
    """How papers write a folded word with its umlauts: as written (``Schrödinger``) and
    with them written out, as the index folds it (``schroedinger``)."""

    written: str
    out: str


class Umlauts:
    """The spellings of query words with umlauts, read from the papers and kept per index
    generation; one per engine, shared by its threads."""

    def __init__(self) -> None:
        self._known: dict[str, Spelling | None] = {}
        self._generation = -1
        self._lock = threading.Lock()

    def alternatives(
        self, lex: LexicalIndex, store: PaperStore, parsed: ParsedQuery
    ) -> tuple[ParsedQuery, list[str]]:
        """``parsed`` with each word, hyphenated word or phrase (free, signed, ``ti:``,
        ``abs:`` or ``au:``) that papers also spell the other way given that spelling
        (``Clause.also``: "Debye-Hueckel" -> "Debye-Hückel"), and a note for each; none for
        a query of more than ``QUERY_WORDS`` words (a hyphenated word's parts each count)."""
        words = sum(len(_WORDS_AND_GAPS.split(c.text)) // 2 + 1 for c in parsed.clauses)
        if words > QUERY_WORDS:
            return parsed, []
        fold = lex.analyzer("words")
        # A spelling the query has already ("Kahler -Kaehler") is the user's to weigh.
        asked = {t for c in parsed.clauses for t in fold.analyze(c.text)}
        clauses: list[Clause] = []
        notes: list[str] = []
        for c in parsed.clauses:
            other = None
            if c.field in (None, "ti", "abs", "au"):
                other = self._respelled(lex, store, c.text, asked)
            if other is None:
                clauses.append(c)
                continue
            clauses.append(replace(c, also=(other,)))
            notes.append(f"'{c.text}' is also written '{other}': both spellings are searched")
        if not notes:
            return parsed, []
        return replace(parsed, clauses=tuple(clauses)), notes

    def _respelled(
        self, lex: LexicalIndex, store: PaperStore, text: str, asked: set[str]
    ) -> str | None:
        """``text`` (a word, a hyphenated word or a phrase) with each word that has an
        ``other_spelling`` the query does not hold (``asked``: its folded words) so spelled;
        None when no word has one."""
        pieces = _WORDS_AND_GAPS.split(text)  # words at even places, spaces and hyphens between
        fold = lex.analyzer("words")
        out = list(pieces)
        for at in range(0, len(pieces), 2):
            other = self.other_spelling(lex, store, pieces[at]) if pieces[at] else None
            if other is not None and asked.isdisjoint(fold.analyze(other)):
                out[at] = other
        return "".join(out) if out != pieces else None

    def other_spelling(self, lex: LexicalIndex, store: PaperStore, word: str) -> str | None:
        """``word``'s other spelling that papers hold: its umlauts written out
        ("Schrödinger", "Schrodinger" -> "Schroedinger") or written as umlauts
        ("Schroedinger" -> "Schrödinger"); None when it has none."""
        tokens = lex.analyzer("words").analyze(word)
        if len(tokens) != 1:
            return None
        folded = tokens[0]
        searcher = lex.index.searcher()
        # Written out: an e after an a, o or u, a spelling some paper holds.
        outs = {folded[: m.end()] + "e" + folded[m.end() :] for m in re.finditer("[aou]", folded)}
        if any(_held(searcher, out) for out in outs):
            found = self.spelling(lex, store, folded)
            if found is not None and _held(searcher, found.out):
                return _cased(found.out, word)
        # Written as umlauts: an e dropped after its vowel.
        for m in _VOWEL_E.finditer(folded):
            bare = folded[: m.end()] + folded[m.end() + 1 :]
            if _held(searcher, bare):
                found = self.spelling(lex, store, bare)
                if found is not None and found.out == folded:
                    return found.written
        return None

    def spelling(self, lex: LexicalIndex, store: PaperStore, folded: str) -> Spelling | None:
        """How papers write ``folded`` with umlauts, when at least ``MIN_SHARE`` of up to
        ``SAMPLE`` papers holding it do (the commonest way); else None."""
        with self._lock:
            if self._generation != lex.generation or len(self._known) >= CACHED:
                self._known.clear()
                self._generation = lex.generation
            if folded in self._known:
                return self._known[folded]
        found = _read_spelling(lex, store, folded)
        with self._lock:
            self._known[folded] = found
        return found


def written_ways(
    lex: LexicalIndex, store: PaperStore, folded: str
) -> tuple[Counter[str], int, int]:
    """How the newest papers holding ``folded`` (up to ``SAMPLE``) write it with umlauts:
    each way -> how many of them do, how many write it so at all, and how many were read."""
    terms = [tantivy.Query.term_query(lex.schema, f, folded) for f in FIELDS]
    either = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in terms])
    docids, _ = lex.top(either, SAMPLE, sort="newest")
    fold = lex.analyzer("words")
    ways: Counter[str] = Counter()
    writing = 0
    papers = store.get(docids) if docids else {}
    for paper in papers.values():
        texts = (paper.title, paper.abstract, " ".join(a.name for a in paper.authors))
        # Most texts are ASCII without TeX (an umlaut as TeX: Schr\"odinger): none to read.
        text = " ".join(accented(t) for t in texts if "\\" in t or not t.isascii())
        seen = {w for w in _UMLAUT_WORD.findall(text) if fold.analyze(w) == [folded]}
        ways.update(seen)
        writing += bool(seen)
    return ways, writing, len(papers)


def _read_spelling(lex: LexicalIndex, store: PaperStore, folded: str) -> Spelling | None:
    ways, writing, read = written_ways(lex, store, folded)
    if not read or writing < MIN_SHARE * read:
        return None
    written = ways.most_common(1)[0][0]
    out = lex.analyzer("words").analyze(written.lower().translate(_WRITTEN_OUT))
    return Spelling(written, out[0]) if len(out) == 1 and out[0] != folded else None


def _held(searcher: tantivy.Searcher, term: str) -> bool:
    return any(searcher.doc_freq(f, term) for f in FIELDS)


def _cased(spelled: str, like: str) -> str:
    """``spelled`` with the first letter in the case of ``like``'s ("Schroedinger")."""
    return spelled[:1].upper() + spelled[1:] if like[:1].isupper() else spelled
