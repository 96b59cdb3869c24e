"""Sorted by date, a query's keyword matches must hold every word while enough papers do,
else its rarer words, and its hyphenated words whole; a two-word query's words near each
other while enough papers hold them so (``engine.near_words``).

A query of four or more free words needs only some of them (``engine.match``: 3 of 4, with
the rarest; 3 of 5, 4 of 9, any of them). In relevance order that is harmless, since BM25
puts the papers holding the query's rare words first. Sorted by date it is not. At 663k
papers of every field "dark matter direct detection experiments" listed the newest papers
on object detection experiments, and the list fed the search's feed. So in a list sorted by
date or citations a match must hold every free word, as arXiv's own listing search and
Google Scholar's date sort ask, while at least ``[search] match_all_sorted_from`` papers
(the filters aside) hold them all. With fewer (a long query that reads like a sentence),
"question answering over knowledge bases" listed the newest papers that say "question
answering" and "over" and nothing about knowledge bases: there the words a match needs
must be the query's rarer ones. Words that more than ``[search]
match_common_above_sorted`` of the papers hold ("over", "using", "models" in a corpus on
language models) still score, but they count toward the number only once the rarer words
run out. Elasticsearch's ``common`` terms query drew the same line between high- and
low-frequency terms.

A hyphenated word is searched as its parts (``engine.query.Clause.parts``): in relevance
order a paper holds it when it holds every part (``engine.hyphens``), and the papers holding
them together come first. Sorted by date, "fine-tuning" listed the newest papers holding
"fine" and "tuning" anywhere (before session 35, "h-index" the newest holding "index" or a
lone "h": 560 on the demo, 98 of them about the h-index). So there a hyphenated word counts
only where its parts stand together, as a phrase ("h index", "h-index") or written as one
word ("hindex"), as Lucene's word-delimiter filter catenates them.

The strict set is the relevance-order set narrowed (``RarerWords.query``), so the papers it
leaves out are the difference of the two, and the answer says how many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import tantivy

from papersift.engine.hyphens import together
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_schema import STOP_WORDS
from papersift.engine.match import (
    KeywordQuery,
    MatchRule,
    at_least,
    docid_union,
    keyword_members,
)  # fmt: skip
from papersift.engine.near_words import near_words
from papersift.engine.word_forms import word_clause

# Clauses told apart by one search: scores are 32-bit floats, exact integers up to 2**24.
BITS = 20


@dataclass(frozen=True, slots=True)
class RarerWords:
    """A date-sorted list's keyword matches: ``query`` (the relevance-order matches that
    hold ``need`` of the rarer words, as ``held_by`` reads them) and ``loose`` (the
    relevance-order matches), whose difference the list leaves out."""

    query: tantivy.Query
    loose: tantivy.Query
    common: tuple[str, ...]  # the words that count only after the rarer ones
    rarer: tuple[int, ...]  # the free clauses (``KeywordQuery.free``) that are not common
    need: int  # of which a match holds this many
    # Each of ``rarer`` as the rule reads it: a hyphenated word's parts together.
    held_by: tuple[tantivy.Query, ...] = ()
    whole: tuple[tuple[str, ...], ...] = ()  # the hyphenated words' parts
    every: bool = False  # every free word is needed, where relevance order needs some
    apart: bool = False  # a two-word query's words are needed near each other (engine.near_words)

    @property
    def reason(self) -> str:
        """What the papers this rule leaves out hold instead, for the answer's note."""
        reasons = []
        if self.apart:
            reasons.append("hold the two words farther apart")
        if self.every:
            reasons.append("hold only some of the query's words")
        if self.common:
            words = ", ".join(f"'{w}'" for w in self.common)
            reasons.append(
                f"match fewer of the query's rarer words, counting common ones ({words}) instead"
            )
        if len(self.whole) == 1:
            parts = [p for p in dict.fromkeys(self.whole[0]) if p.lower() not in STOP_WORDS]
            both = " and ".join(f"'{p}'" for p in parts)
            reasons.append(f"hold {both} but not '{'-'.join(self.whole[0])}'")
        elif self.whole:
            words = " or ".join(f"'{'-'.join(w)}'" for w in self.whole)
            reasons.append(f"hold parts of {words} but not the whole word")
        return ", or ".join(reasons)


def rarer_words(
    lex: LexicalIndex, kq: KeywordQuery, rule: MatchRule, common_above: float,
    every_from: int = 0,
) -> RarerWords | None:  # fmt: skip
    """The stricter matches of ``kq`` for a list sorted by date or citations, or None when
    the rule changes nothing. A query that needs only some of its free words needs every
    one when at least ``every_from`` papers (0: never) hold them all, the filters aside, so
    that a facet's count stays what clicking it gives. Otherwise it needs its rarer words
    (nothing changes when there is no hyphenated word and none of the query's words counts
    as common: ``common_above`` is 0, every free word is needed anyway, the query has no
    more free words than ``rule.all_up_to`` and ``rule.rarest_up_to``, where short queries
    keep their own rules, or none of its words is that common)."""
    n = len(kq.free)
    if kq.query is None or not n:
        return None
    if every_from > 0 and kq.required < n:
        every = narrowed(lex, kq, [], forms=rule.word_forms)
        if lex.count(every.query) >= every_from:
            return every
    common: list[int] = []
    if common_above > 0 and kq.required < n and n > max(rule.all_up_to, rule.rarest_up_to):
        common = [
            i for i, word in enumerate(kq.free_words)
            if word is not None and lex.share(word) > common_above
        ]  # fmt: skip
    if not common and not any(kq.hyphenated):
        if (near := near_words(lex, kq, every_from)) is None:
            return None
        # One condition in place of the first clause: ``sorted_left_out`` reads it so.
        strict, held = near
        return RarerWords(strict, kq.query, (), (0,), 1, (held,), apart=True)
    return narrowed(lex, kq, common, min(n - len(common), kq.required), forms=rule.word_forms)


def narrowed(
    lex: LexicalIndex, kq: KeywordQuery, common: list[int], need: int | None = None,
    *, forms: bool = False,
) -> RarerWords:  # fmt: skip
    """``kq``'s matches that hold ``need`` (None: all) of its free clauses other than
    ``common``, a hyphenated word's parts together and (``forms``) a plain word in one of its
    own forms (``engine.word_forms``), as a short query's words are held."""
    assert kq.query is not None
    rarer = [i for i in range(len(kq.free)) if i not in common]
    whole = {i: parts for i in rarer if (parts := kq.hyphenated[i]) is not None}
    need = len(rarer) if need is None else need

    def holds(i: int) -> tantivy.Query:
        if i in whole:  # its parts together, in any of its spellings (engine.umlauts)
            spelled = [whole[i], *kq.other_parts[i]]
            held = [together(lex, parts) for parts in spelled]
            return (
                held[0]
                if len(held) == 1
                else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in held])
            )
        word = kq.free_words[i]
        if not forms or not word or kq.held[i]:  # the rarest word already holds its forms
            return kq.free[i]
        return word_clause(lex, kq.spellings[i], kq.free[i]) or kq.free[i]

    clauses = [holds(i) for i in rarer]
    # Each clause's words, to size it by (a plain word, or a hyphenated word's parts).
    words = [whole.get(i) or ((w,) if (w := kq.free_words[i]) else ()) for i in rarer]
    held = (
        at_least(clauses, [lex.postings(w) for w in words], need)
        if all(words) or need >= len(clauses)
        # An OR group or a phrase has no one word to size it by: Tantivy's own scorer.
        else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in clauses], need)
    )  # fmt: skip
    # The condition scores nothing: every paper keeps its relevance-order score.
    strict = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, kq.query),
        (tantivy.Occur.Must, tantivy.Query.const_score_query(held, 0.0)),
    ])  # fmt: skip
    names = tuple(kq.free_words[i] or "" for i in common)
    every = need >= len(kq.free) > kq.required
    return RarerWords(
        strict, kq.query, names, tuple(rarer), need, tuple(clauses), tuple(whole.values()),
        every,
    )  # fmt: skip


def sorted_left_out(
    lex: LexicalIndex, kq: KeywordQuery, rarer: RarerWords, looser: npt.NDArray[np.int64],
    listed: npt.NDArray[np.int64], more: int, loose: npt.NDArray[np.int64] | None = None,
    unfetched: tantivy.Query | None = None,
) -> tuple[int, int]:  # fmt: skip
    """What a hybrid list sorted by date leaves out under the rule, and relevance order
    lists: (papers of ``looser``, the semantic matches under relevance order's rule that are
    not listed, holding too few of the query's words for a keyword match; and of the
    ``more`` keyword matches relevance order has beyond the strict ones, those not
    ``listed`` anyway as semantic matches).

    ``loose``: relevance order's keyword matches, when all are in hand; then ``unfetched``
    is the strict keyword side when not all its matches are in hand (the list's keyword
    matches in hand are not among ``listed``). Otherwise every semantic candidate already
    passed the query's required and excluded clauses and the filters, so whether it is a
    keyword match is how many free clauses it holds: one Tantivy search over these papers
    (``clause_holds``), where the match queries themselves cannot skip (their
    minimum-should-match unions walk every posting). That search costs ~15 ms for 1,000
    candidates at 663k papers, reading them from relevance order's matches ~1 ms."""
    if loose is not None:
        left = looser[~np.isin(looser, loose)]
        also = listed[np.isin(listed, loose)]  # then: those not strict matches
        if len(also) and unfetched is not None:
            also = also[~np.isin(also, list(keyword_members(lex, unfetched, also.tolist(), ())))]
        return len(left), more - len(also)
    ids = np.union1d(looser, listed)
    if not len(ids):
        return 0, max(more, 0)
    n = len(kq.free)
    # The rarer clauses the rule reads otherwise (hyphenated words), as extra columns.
    other = [j for j, i in enumerate(rarer.rarer) if rarer.held_by[j] is not kq.free[i]]
    holds = clause_holds(lex, [*kq.free, *(rarer.held_by[j] for j in other)], ids)
    loose_held = holds[:, :n].sum(axis=1) >= kq.required
    held = holds[:, list(rarer.rarer)]
    held[:, other] = holds[:, n:]
    strict = loose_held & (held.sum(axis=1) >= rarer.need)
    by_meaning = int(np.count_nonzero(np.isin(ids, looser) & ~loose_held))
    by_words = more - int(np.count_nonzero(np.isin(ids, listed) & loose_held & ~strict))
    return by_meaning, by_words


def clause_holds(
    lex: LexicalIndex, clauses: Sequence[tantivy.Query], ids: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """Which of ``clauses`` each of the papers ``ids`` matches (a row per paper): each
    clause scores a distinct power of two and nothing else scores, so a paper's score is the
    set of clauses it holds (as Elasticsearch's named queries report matches), in one
    search over the papers per ``BITS`` clauses."""
    holds = np.zeros((len(ids), len(clauses)), bool)
    union = tantivy.Query.const_score_query(docid_union(lex, ids.tolist()), 0.0)
    for start in range(0, len(clauses), BITS):
        chunk = clauses[start : start + BITS]
        flags = [
            (tantivy.Occur.Should, tantivy.Query.const_score_query(q, float(1 << j)))
            for j, q in enumerate(chunk)
        ]  # fmt: skip
        found, scores = lex.top(
            tantivy.Query.boolean_query([(tantivy.Occur.Must, union), *flags]), len(ids)
        )
        rows = np.searchsorted(ids, np.asarray(found, np.int64))
        mask = np.rint(np.asarray(scores, np.float64)).astype(np.int64)
        for j in range(len(chunk)):
            holds[rows, start + j] = (mask >> j) & 1 == 1
    return holds
