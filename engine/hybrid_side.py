"""A hybrid list's keyword side against its fused list: the match set as one query, the
keyword matches beyond the fused candidates, and what a stricter sorted list leaves out
(``engine.search``; the match rules themselves: ``engine.match``)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import tantivy

from papersift.engine.lexical import LexicalIndex
from papersift.engine.match import keyword_members
from papersift.engine.plan import LeftOut, Plan
from papersift.engine.ranking import EMPTY, Ranking
from papersift.engine.rarer_words import sorted_left_out


def meaning_left_out(looser: Ranking, held: npt.NDArray[np.int64], lex: LexicalIndex,
    unfetched: tantivy.Query | None,
) -> int:  # fmt: skip
    """How many papers of ``looser`` (the semantic matches under relevance order's rule)
    a hybrid list sorted by date or citations leaves out: those not ``held`` (its keyword
    matches in hand and its semantic matches) and, when not every keyword match is in
    hand, not matched by ``unfetched`` (the keyword side) either."""
    loose = looser.ids[~np.isin(looser.ids, held, kind="table")]
    if len(loose) and unfetched is not None:
        return len(loose) - len(keyword_members(lex, unfetched, loose.tolist(), ()))
    return len(loose)


def hybrid_match_query(
    lex: LexicalIndex, keyword_side: tantivy.Query, keyword_ids: npt.NDArray[np.int64],
    fused: Ranking,
) -> tantivy.Query:  # fmt: skip
    """Hybrid's match set as one Tantivy query, when there are more keyword matches than
    candidates: the keyword matches, plus the semantic (and title-rule) matches of the
    ``fused`` list that are not among the keyword candidates ``keyword_ids``."""
    extra = fused.ids[~np.isin(fused.ids, keyword_ids, kind="table")]
    if not len(extra):
        return keyword_side
    either = [
        (tantivy.Occur.Should, keyword_side),
        (tantivy.Occur.Should, lex.docids_for(extra.tolist())),
    ]
    return tantivy.Query.boolean_query(either)


def keyword_tail(
    lex: LexicalIndex, keyword_side: tantivy.Query, start: int, fused: Ranking, offset: int,
    size: int,
) -> list[tuple[int, float]]:  # fmt: skip
    """A hybrid page's part beyond the ``fused`` list: keyword matches after the first
    ``start`` (the candidates), in BM25 order, without those the fused list holds. Their
    fused score would be 0: below the candidates' minimum on the keyword side."""
    listed = set(fused.ids.tolist())
    skip = max(0, offset - len(fused))  # tail results on earlier pages
    want = skip + size - max(0, len(fused) - offset)
    ids, _ = lex.top(keyword_side, want + len(listed), start)
    tail = [d for d in ids if d not in listed][skip:want]
    return [(d, 0.0) for d in tail]


def hybrid_left_out(
    lex: LexicalIndex, plan: Plan, looser: Ranking | None, semantic: Ranking,
    matches: npt.NDArray[np.int64], matched: int, loose: tuple[list[int], list[float], int] | None,
    unfetched: tantivy.Query | None,
) -> LeftOut:  # fmt: skip
    """What a hybrid list sorted by date or citations leaves out that relevance order lists
    (``engine.plan.sorted_note`` words it). ``looser``: the semantic matches under relevance
    order's rule (None: the same rule); ``semantic``: the list's; ``matches``: its keyword
    matches in hand, of ``matched`` in all; ``loose``: relevance order's keyword matches (up
    to twice the candidates) and their count, when the rarer-words rule made the list's
    stricter; ``unfetched``: the keyword side, when not all its matches are in hand."""
    held = np.concatenate((matches, semantic.ids))
    if plan.rarer is None or loose is None:
        return LeftOut(0 if looser is None else meaning_left_out(looser, held, lex, unfetched))
    out = EMPTY.ids if looser is None else looser.ids[~np.isin(looser.ids, held, kind="table")]
    listed = semantic.ids[~np.isin(semantic.ids, matches, kind="table")]
    loose_ids, _, loose_total = loose
    in_hand = np.asarray(loose_ids, np.int64) if len(loose_ids) == loose_total else None
    return LeftOut(*sorted_left_out(
        lex, plan.keyword, plan.rarer, out, listed, loose_total - matched, in_hand, unfetched
    ))  # fmt: skip
