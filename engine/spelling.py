"""Did you mean: for a query word no paper holds, or that few papers hold and that looks
like a typo of a word far more hold (``likely_typo``), the word papers do hold that was
most likely meant (the fewest edits, then the most papers), and the query with it put in;
and whether a query that matches nothing is searched so instead (``Suggestion.sure``).

Candidates come from Tantivy's Levenshtein automaton over the term dictionary
(``tantivy.Query.fuzzy_term_query``), so no query scans the vocabulary. The automaton
finds papers, not words, and the index holds stems (``engine.lexical_schema``): the words
themselves are read from a few of those papers' text in the store and measured against
the typed word, and each round leaves out the stems already seen, so the next one reaches
rarer words. Only a query with a word no paper holds, or a rare one a cheap bound lets
through (``_variant_held``), pays for this (``engine.plan``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import tantivy
from rapidfuzz.distance import OSA

from papersift.core.accents import accented
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import name_analyzer, text_analyzer
from papersift.engine.store import PaperStore
from papersift.engine.word_lists import fold, foreign_language, is_english

# Words of fewer letters get no suggestion (nearly every such string is an edit or two
# from some word); up to TWO_EDITS_FROM - 1 letters one edit, from there on two.
SHORTEST = 4
TWO_EDITS_FROM = 5
# A word no paper holds gets the nearest word held by more than TYPO_SHARE of the papers
# (6 at 663k papers, where "lerning" is held by 2: not offered for "lernnig"; any below
# 100,000 papers).
TYPO_SHARE = 1e-5
# A word some papers hold may still be a typo: a misspelling is a small share of its word's
# uses, so it is held by far fewer papers than the word ("transfomer" by 14 of 663k papers,
# "transformer" by 43,551), at any size of corpus, and by few: at most RARE_SHARE of the
# papers (66 at 663k; at least one). It is offered the word (``likely_typo``) when that is
# held by OFFER_RATIO times as many papers, has the same first letter and is the word with
# one letter left out ("transfomer") or two neighbours swapped ("langauge"): a letter
# added or changed more often makes another real word ("radion", "stau", "polytropic").
# A query that matches nothing is searched as the suggestion instead when each word it
# replaces is held by no paper or APPLY_RATIO times as many hold its replacement; otherwise
# it is only offered. Chosen on the tuning half of bench/judgments/spelling-663k.tsv; both
# halves measured by bench/spelling_judged.py (bench/RESULTS.md, session 35).
RARE_SHARE = 1e-4
OFFER_RATIO = 50
APPLY_RATIO = 300
SAMPLE = 20  # papers read per round
ROUNDS = 4  # rounds per edit distance; each leaves out the stems the ones before found

_FOLD = name_analyzer()  # words as typed: lowercased, folded to ASCII, not stemmed
_STEM = text_analyzer()  # words as the title and abstract fields hold them
_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789"


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
    """Papers a word is held by at most and may itself be a typo: a word no paper holds is
    offered only words more hold (``TYPO_SHARE``)."""
    return int(lex.num_docs * TYPO_SHARE)


def rare_cap(lex: LexicalIndex) -> int:
    """Papers a word some papers hold is held by at most and may be a typo: ``RARE_SHARE``
    of them, at least one."""
    return max(1, int(lex.num_docs * RARE_SHARE))


def likely_typo(word: str, held: int, near: str, near_held: int, ratio: int) -> bool:
    """Whether ``word``, which ``held`` papers hold, likely misspells ``near``, which
    ``near_held`` hold (both folded): ``ratio`` times as many papers, the same first letter,
    at least ``TWO_EDITS_FROM`` letters, and a letter of ``near`` left out or two swapped."""
    if near_held < ratio * held or len(word) < TWO_EDITS_FROM or word[:1] != near[:1]:
        return False
    left_out = len(word) == len(near) - 1
    swapped = len(word) == len(near) and sorted(word) == sorted(near)  # else a letter changed
    return (left_out or swapped) and OSA.distance(word, near, score_cutoff=1) == 1


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


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Did you mean: the query with its likely typos replaced, and whether a query that
    matches nothing is searched as it instead ("showing results for")."""

    query: str
    sure: bool


def did_you_mean(
    lex: LexicalIndex, store: PaperStore, query: str, held: Mapping[str, int]
) -> Suggestion | None:
    """``query`` with each of its words that may be typos (``held``: each free word and
    how many papers hold it) replaced by the word ``suggest`` finds for it, the rest as
    typed; None when there is none. A word no paper holds may be one; so may a word few
    papers hold, when a near word is held by far more (``likely_typo``)."""
    if foreign_language(w for w, n in held.items() if not n):
        return None
    found = {w: correction(lex, store, w, n) for w, n in held.items() if may_be_typo(w, query)}
    fixed = corrected_query(query, {w: c[0] for w, c in found.items() if c is not None})
    return None if fixed is None else Suggestion(fixed, all(c[1] for c in found.values() if c))


def correction(
    lex: LexicalIndex, store: PaperStore, word: str, held: int
) -> tuple[str, bool] | None:
    """The word that ``word``, held by ``held`` papers, likely misspells, and whether a query
    that matches nothing is searched with it instead; None when it is likely no typo."""
    if not held:
        near = suggest(lex, store, word, typo_floor(lex) + 1)
        return None if near is None else (near, True)
    folded = _FOLD.analyze(word)
    if held > rare_cap(lex) or len(folded) != 1 or len(folded[0]) < TWO_EDITS_FROM:
        return None
    # Most rare words have no near word that common: a cheap bound first, then the automata.
    if not _variant_held(lex, folded[0], OFFER_RATIO * held):
        return None
    near = suggest(lex, store, word, OFFER_RATIO * held)
    if near is None:
        return None
    near_held = lex.postings([near])
    if not likely_typo(folded[0], held, near, near_held, OFFER_RATIO):
        return None
    return near, likely_typo(folded[0], held, near, near_held, APPLY_RATIO)


def _variant_held(lex: LexicalIndex, word: str, least: int) -> bool:
    """Whether ``word`` with a letter put in or two neighbours swapped after its first
    (``likely_typo``'s edits) is held by ``least`` papers as ``LexicalIndex.postings``
    counts them: ~300 dictionary lookups, ~1 ms, where the automata read papers for
    ~20-100 ms, and most rare words have no such neighbour."""
    variants = {word[:i] + c + word[i:] for i in range(1, len(word) + 1) for c in _LETTERS}
    variants.update(
        word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(1, len(word) - 1)
    )
    searcher = lex.searcher()
    stems = {t for v in variants for t in _STEM.analyze(v)[:1]}
    most = max((searcher.doc_freq("ti", t) + searcher.doc_freq("abs", t) for t in stems), default=0)
    return most >= least or any(most + searcher.doc_freq("au", v) >= least for v in variants)


def may_be_typo(word: str, query: str) -> bool:
    """Whether ``word`` of ``query`` may be misspelt: not a word of English running text
    ("halo", not corrected to the surname "Hao"), nor an acronym in capitals ("CRISPR",
    not "CRISP") in a query that is not all capitals or is that one word (several words
    all in capitals are shouted: "LANGAUGE TRANSLATON"), nor a word in another script
    ("机器翻译", "перевод"), which no correction into the papers' Latin words would fix."""
    shouted = query.isupper() and len(query.split()) > 1
    acronym = len(word) > 1 and word.isupper() and not shouted
    latin = any("a" <= c <= "z" for c in fold(word))
    return latin and not acronym and not is_english(word)


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
