"""Did you mean: for a query word no paper holds, the word papers do hold that was most
likely meant (the fewest edits, then the most papers), and the query with it put in.

Candidates come from Tantivy's Levenshtein automaton over the term dictionary
(``tantivy.Query.fuzzy_term_query``), so no query scans the vocabulary. The automaton
finds papers, not words, and the index holds stems (``engine.lexical_schema``): the words
themselves are read from a few of those papers' text in the store and measured against
the typed word, and each round leaves out the stems already seen, so the next one reaches
rarer words. Only a query with a word no paper holds pays for this (``engine.plan``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import tantivy
from rapidfuzz.distance import OSA

from papersift.core.accents import accented
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import name_analyzer, text_analyzer
from papersift.engine.store import PaperStore
from papersift.engine.word_lists import foreign_language, is_english

# Words of fewer letters get no suggestion (nearly every such string is an edit or two
# from some word); up to TWO_EDITS_FROM - 1 letters one edit, from there on two.
SHORTEST = 4
TWO_EDITS_FROM = 5
# In a large corpus most typos are held by a paper or two (at 663k papers "lerning" by 2,
# "learning" by 79,276; "langauge" by 8): a word held by at most this share of the papers
# may be one (below 100,000 papers none is), as Lucene's DirectSpellChecker corrects words
# under its maxQueryFrequency. Its suggestion must be held by POPULAR times as many papers
# (Elasticsearch's "popular" suggest mode asks for more).
TYPO_SHARE = 1e-5
POPULAR = 100
SAMPLE = 20  # papers read per round
ROUNDS = 4  # rounds per edit distance; each leaves out the stems the ones before found

_FOLD = name_analyzer()  # words as typed: lowercased, folded to ASCII, not stemmed
_STEM = text_analyzer()  # words as the title and abstract fields hold them


def max_edits(word: str) -> int:
    """How many edits a suggestion may be from ``word`` (folded): 0 for a short word."""
    if len(word) < SHORTEST:
        return 0
    return 1 if len(word) < TWO_EDITS_FROM else 2


def close_words(words: Iterable[str], target: str, limit: int) -> dict[str, int]:
    """Those of ``words`` within ``limit`` edits of ``target``, with their edits. Most words
    of a text fail a cheap bound first: an edit changes the length by at most one and adds
    or drops at most two letters of the set."""
    letters, lo, hi = set(target), len(target) - limit, len(target) + limit
    out = {}
    for w in words:
        if lo <= len(w) <= hi and len(letters.symmetric_difference(w)) <= 2 * limit:
            # Optimal string alignment: Damerau-Levenshtein where no substring is edited
            # twice, as Tantivy's automaton counts (a swap of neighbours is one edit).
            d = OSA.distance(w, target, score_cutoff=limit)
            if d <= limit:
                out[w] = d
    return out


def typo_floor(lex: LexicalIndex) -> int:
    """Papers a word is held by at most and may still be a typo (``TYPO_SHARE``)."""
    return int(lex.num_docs * TYPO_SHARE)


def suggest(lex: LexicalIndex, store: PaperStore, word: str, least: int = 1) -> str | None:
    """The word papers hold that ``word`` most likely misspells: the fewest edits from it
    (``max_edits``), then the most papers holding it, of those held by at least ``least``
    papers; None when no word is that close."""
    folded = _FOLD.analyze(word)
    if len(folded) != 1 or (limit := max_edits(folded[0])) == 0:
        return None
    typed = folded[0]
    stem = (_STEM.analyze(word) or folded)[0]
    # One edit first: most typos are one (Damerau 1964), and two edits of a short stem
    # reach so many common terms that the automata read ~5x the postings (663k papers).
    for edits in range(1, limit + 1):
        found = _near(lex, store, typed, stem, edits, least)
        found.pop(typed, None)
        ranked = sorted((d, -lex.postings([w]), w) for w, d in found.items())
        best = next((w for _, n, w in ranked if -n >= least), None)  # as the search reads it
        if best is not None:
            return best
    return None


def _near(
    lex: LexicalIndex, store: PaperStore, typed: str, stem: str, limit: int, least: int
) -> dict[str, int]:
    """Words within ``limit`` edits of ``typed``, with their edits, in the text of papers
    holding a term the automata match: in titles and abstracts a stem within as many edits
    of ``stem`` or a prefix of ``typed`` (the stemmer does not know a misspelt suffix:
    "summarizaton" is no stem of "summarization", "summar" is; with two edits, a prefix one
    edit away); in authors' names a name
    within as many edits of ``typed``. Each round reads ``SAMPLE`` papers and leaves out
    the terms it met, so the next reaches rarer ones, until a word one edit away is found."""
    schema = lex.schema
    prefixes = [typed[:n] for n in range(max(SHORTEST, len(typed) // 2), len(typed))]
    stem_edits = min(limit, max_edits(stem))  # a shorter stem as a word that short
    either = [
        tantivy.Query.fuzzy_term_query(schema, "ti", stem, stem_edits),
        tantivy.Query.fuzzy_term_query(schema, "abs", stem, stem_edits),
        tantivy.Query.fuzzy_term_query(schema, "au", typed, limit),
    ]
    fields = ("ti", "abs")
    if limit == 1 and prefixes:  # folded words are letters and digits: nothing to escape
        either += [tantivy.Query.regex_query(schema, f, "|".join(prefixes)) for f in fields]
    elif limit > 1:  # one of the two edits may be in the stem ("lernnig": "learn")
        either += [
            tantivy.Query.fuzzy_term_query(schema, f, p, 1) for p in prefixes for f in fields
        ]
    near = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in either])
    found: dict[str, int] = {}
    seen: list[int] = []
    left_out: list[tuple[tantivy.Occur, tantivy.Query]] = []
    for _ in range(ROUNDS):
        query = tantivy.Query.boolean_query([(tantivy.Occur.Must, near), *left_out])
        docids, _ = lex.top(query, SAMPLE)
        if not docids:
            break
        papers = store.get(docids).values()
        text = " ".join(accented(f"{p.title} {p.abstract}") for p in papers)
        names = close_words(
            set(_FOLD.analyze(" ".join(a.name for p in papers for a in p.authors))), typed, limit
        )
        words = set(_FOLD.analyze(text))
        found.update(names)
        found.update(close_words(words, typed, limit))
        # The terms the automata matched, and these papers, are left out next round.
        stems = set(_STEM.analyze(" ".join(words)))  # each word once: a third of the text
        matched = set(close_words(stems, stem, stem_edits)) | stems.intersection(prefixes)
        for p in prefixes if limit > 1 else ():
            matched |= close_words(stems, p, 1).keys()
        left_out += [
            (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, field, s))
            for s in matched for field in ("ti", "abs")
        ]  # fmt: skip
        left_out += [
            (tantivy.Occur.MustNot, tantivy.Query.term_query(schema, "au", n)) for n in names
        ]
        # None is closer; the first papers read favour common words.
        if any(d == 1 and lex.postings([w]) >= least for w, d in found.items() if w != typed):
            break
        seen += docids
        left_out.append((tantivy.Occur.MustNot, lex.docids_for(seen)))
    return found


def did_you_mean(
    lex: LexicalIndex, store: PaperStore, query: str, held: Mapping[str, int]
) -> str | None:
    """``query`` with each of its words that may be typos (``held``: each free word and
    how many papers hold it) replaced by the word ``suggest`` finds for it, the rest as
    typed; None when there is none. A word no paper holds may be one; so may a word held by
    at most ``typo_floor`` papers, when a near word is held by ``POPULAR`` times as many."""
    if foreign_language(w for w, n in held.items() if not n):
        return None
    floor = typo_floor(lex)
    found = {
        w: suggest(lex, store, w, max(floor + 1, POPULAR * n))
        for w, n in held.items() if n <= floor and may_be_typo(w, query)
    }  # fmt: skip
    return corrected_query(query, {w: s for w, s in found.items() if s is not None})


def may_be_typo(word: str, query: str) -> bool:
    """Whether ``word`` of ``query`` may be misspelt: not a word of English running text
    ("halo", not corrected to the surname "Hao"), nor an acronym in capitals in a query
    that is not all capitals ("CRISPR", not "CRISP")."""
    acronym = len(word) > 1 and word.isupper() and not query.isupper()
    return not acronym and not is_english(word)


def unheld_notes(query: str, unheld: list[str]) -> list[str]:
    """The notes on the words of ``query`` no paper holds: check the spelling of those
    that may be typos; the others (real words, acronyms, a query in another language) are
    simply not in this index."""
    foreign = foreign_language(unheld)
    typos = [w for w in unheld if not foreign and may_be_typo(w, query)]
    words = [w for w in unheld if w not in typos]
    notes = [f"no paper holds {_listed(typos)}: check the spelling"] if typos else []
    return notes + ([f"no paper in this index holds {_listed(words)}"] if words else [])


def _listed(words: list[str]) -> str:
    return ", ".join(f"'{w}'" for w in words)


def corrected_query(query: str, replacements: Mapping[str, str]) -> str | None:
    """``query`` as typed with each word of ``replacements`` (every whole-word occurrence,
    any case) replaced by its suggestion in the same case; None if nothing was replaced."""
    wanted = {wrong.lower(): right for wrong, right in replacements.items()}
    if not wanted:
        return None
    words = "|".join(re.escape(w) for w in sorted(wanted, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)(?:{words})(?!\w)", re.IGNORECASE)
    out = pattern.sub(lambda m: _same_case(m.group(0), wanted.get(m.group(0).lower())), query)
    return out if out != query else None


def _same_case(typed: str, word: str | None) -> str:
    if word is None:  # a letter whose lowercase is not the one it matched (Turkish İ)
        return typed
    if typed.isupper() and len(typed) > 1:
        return word.upper()
    return word.capitalize() if typed[:1].isupper() else word
