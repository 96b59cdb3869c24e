"""The lab radar's standing lists: "for you" (a member's whole library and their own papers)
and "for this lab" (the lab members' own papers), ranked by ``engine.recommend``.

The home page and the private feeds ask for these on every visit, so answers are kept per
index generation and seed set: they change only when the papers (the keyword index) or the
seeds do. A ranking over an analysed window costs ~0.2 s of CPU at 663k papers, but the
window's first costs ~5 s: ``warm`` analyses it when the papers change, before a member
opens the home page.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence

from cachetools import LRUCache

from papersift.core.config import LabConfig
from papersift.engine.library import Library
from papersift.engine.members import Member, seeds_exist
from papersift.engine.recommend import MAX_SEEDS, Recommendations, recommend, warm_window
from papersift.engine.search import SearchEngine

OWN_PAPERS = 200  # a researcher's newest papers used as seeds
LAB_PAPERS = 500  # the lab members' newest papers used as seeds
CACHE_SIZE = 128


def member_seeds(engine: SearchEngine, library: Library, member: Member) -> list[str]:
    """Every paper in the member's tags, plus the papers of the researcher they are."""
    seeds = library.all_saved(member.id)
    if member.researcher_id is not None:
        papers, _ = engine.newest_papers_of([member.researcher_id], OWN_PAPERS)
        seeds += [p.arxiv_id for p in papers]
    return list(dict.fromkeys(seeds))[:MAX_SEEDS]


def lab_seeds(engine: SearchEngine, lab: LabConfig) -> list[str]:
    """The newest papers of the declared lab members (found by their ORCID)."""
    rids = [rid for m in lab.members for rid, _, _ in engine.people.with_orcid(m.orcid)]
    if not rids:
        return []
    papers, _ = engine.newest_papers_of(rids, LAB_PAPERS)
    return [p.arxiv_id for p in papers]


def warm(engine: SearchEngine, lab: LabConfig) -> int | None:
    """Analyse the recent window ahead of the radar's first request when one will come (a
    lab is declared, or a member has saved papers or a researcher): the papers analysed, 0
    when it was kept already or is empty (``engine.recommend.warm_window``); None when no
    one would ask."""
    if not (lab.declared or seeds_exist(engine.data.root)):
        return None
    return warm_window(engine)


class RadarCache:
    """Recommendations by (keyword index generation, seeds, size); least recently used out."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._kept: LRUCache[Hashable, Recommendations | None] = LRUCache(size)
        self._lock = threading.Lock()

    def top(self, engine: SearchEngine, seeds: Sequence[str], size: int) -> Recommendations | None:
        """The ``size`` best papers of the recent window for ``seeds`` (none when nothing
        there is close to them: ``engine.recommend``'s floor); None without seeds."""
        if not seeds:
            return None
        # The keyword index's generation, not engine.generation(): the ranking reads the
        # papers' text, and the vectors' generation moves at every embedding checkpoint.
        key = (engine.data.lexical.generation, tuple(sorted(seeds)), size)
        with self._lock:
            if key in self._kept:
                return self._kept[key]  # a read makes it the most recently used
        found = recommend(engine, list(seeds), None, 1, size)  # two racing misses both rank
        with self._lock:
            self._kept[key] = found  # the least recently used goes when full
        return found
