"""Sorted by date, a long query's keyword matches must hold its rarer words.

A query of five or more free words needs only some of them (``engine.match``: 3 of 5, 4 of
9), any of them. In relevance order that is harmless, since BM25 puts the papers holding the
query's rare words first. Sorted by date it is not. "question answering over knowledge bases"
listed the newest papers that say "question answering" and "over" and nothing about
knowledge bases, and the list fed the search's feed. So in a list sorted by date or citations
the words a match needs must be the query's rarer ones. Words that more than ``[search]
match_common_above_sorted`` of the papers hold ("over", "using", "models" in a corpus on
language models) still score, but they count toward the number only once the rarer words
run out. Elasticsearch's ``common`` terms query drew the same line between high- and
low-frequency terms.

The strict set is the relevance-order set narrowed (``RarerWords.query``), so the papers it
leaves out are the difference of the two, and the answer says how many.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import tantivy

from papersift.engine.lexical import LexicalIndex
from papersift.engine.match import KeywordQuery, MatchRule, at_least, docid_union

# Clauses told apart by one search: scores are 32-bit floats, exact integers up to 2**24.
BITS = 20


@dataclass(frozen=True, slots=True)
class RarerWords:
    """A date-sorted list's keyword matches: ``query`` (the relevance-order matches that
    hold ``need`` of the rarer words) and ``loose`` (the relevance-order matches), whose
    difference the list leaves out; ``common``: the words that count only after the
    rarer ones."""

    query: tantivy.Query
    loose: tantivy.Query
    common: tuple[str, ...]
    rarer: tuple[int, ...]  # the free clauses (``KeywordQuery.free``) that are not common
    need: int  # of which a match holds this many


def rarer_words(
    lex: LexicalIndex, kq: KeywordQuery, rule: MatchRule, common_above: float
) -> RarerWords | None:
    """The stricter matches of ``kq`` for a list sorted by date or citations, or None when
    the rule does not apply: ``common_above`` is 0, every free word is needed anyway, the
    query has no more free words than ``rule.all_up_to`` and ``rule.rarest_up_to`` (short
    queries keep their own rules), or none of its words is that common."""
    n = len(kq.free)
    if kq.query is None or common_above <= 0 or kq.required >= n:
        return None
    if n <= max(rule.all_up_to, rule.rarest_up_to):
        return None
    common = [
        i for i, word in enumerate(kq.free_words)
        if word is not None and lex.share(word) > common_above
    ]  # fmt: skip
    if not common:
        return None
    rarer = [i for i in range(n) if i not in common]
    need = min(len(rarer), kq.required)
    clauses = [kq.free[i] for i in rarer]
    plain = [w for w in (kq.free_words[i] for i in rarer) if w is not None]
    held = (
        at_least(clauses, [lex.postings([w]) for w in plain], need) if len(plain) == len(rarer)
        # An OR group or a phrase has no one word to size it by: Tantivy's own scorer.
        else tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in clauses], need)
    )  # fmt: skip
    # The condition scores nothing: every paper keeps its relevance-order score.
    strict = tantivy.Query.boolean_query([
        (tantivy.Occur.Must, kq.query),
        (tantivy.Occur.Must, tantivy.Query.const_score_query(held, 0.0)),
    ])  # fmt: skip
    words = tuple(kq.free_words[i] or "" for i in common)
    return RarerWords(strict, kq.query, words, tuple(rarer), need)


def sorted_left_out(
    lex: LexicalIndex, kq: KeywordQuery, rarer: RarerWords, looser: npt.NDArray[np.int64],
    listed: npt.NDArray[np.int64], more: int,
) -> tuple[int, int]:  # fmt: skip
    """What a hybrid list sorted by date leaves out under the rule, and relevance order
    lists: (papers of ``looser``, the semantic matches under relevance order's rule that are
    not listed, holding too few of the query's words for a keyword match; and of the
    ``more`` keyword matches relevance order has beyond the strict ones, those not
    ``listed`` anyway as semantic matches).

    Every semantic candidate already passed the query's required and excluded clauses and
    the filters, so whether it is a keyword match is how many free clauses it holds: one
    Tantivy search over these papers (``clause_holds``), where the match queries themselves
    cannot skip (their minimum-should-match unions walk every posting)."""
    ids = np.union1d(looser, listed)
    if not len(ids):
        return 0, max(more, 0)
    holds = clause_holds(lex, kq.free, ids)
    loose = holds.sum(axis=1) >= kq.required
    strict = loose & (holds[:, list(rarer.rarer)].sum(axis=1) >= rarer.need)
    by_meaning = int(np.count_nonzero(np.isin(ids, looser) & ~loose))
    by_words = more - int(np.count_nonzero(np.isin(ids, listed) & loose & ~strict))
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
