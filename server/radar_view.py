"""The home page's lab-radar sections: "For you" (signed in) and "For this lab" ([lab]).

Both are recommendations of the recent window (``engine.radar``, kept per generation and
seed set, so a repeated visit costs a lookup). A section with nothing to rank is not hidden
silently: it says what would fill it, or that nothing new is close to the seed papers (none
passed the recommender's floor).
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request

from papersift.engine.radar import lab_seeds, member_seeds
from papersift.engine.results import Hit
from papersift.server.context import ctx
from papersift.server.private_feeds import radar_cache
from papersift.server.sessions import COOKIE, accounts, member

HOME_RECOMMENDED = 5


@dataclass(frozen=True, slots=True)
class RadarSection:
    hits: tuple[Hit, ...]
    seeds: int  # papers the ranking was seeded with; 0: the empty state shows instead
    ranked: int  # new papers scored; with no hits: none of them was close to the seeds
    window: str  # "2026-06-02 .. 2026-07-01"


def _section(request: Request, seeds: list[str]) -> RadarSection:
    c = ctx(request)
    found = radar_cache(request).top(c.engine, seeds, HOME_RECOMMENDED)
    if found is None:
        return RadarSection((), 0, 0, "")
    window = f"{found.date_from} .. {found.date_to}" if found.date_from else ""
    return RadarSection(found.hits, len(found.seeds), found.ranked, window)


def for_you(request: Request) -> RadarSection | None:
    """The signed-in member's section; None for a visitor (no session cookie at all)."""
    if COOKIE not in request.cookies:
        return None
    who = member(request)
    if who is None:
        return None
    return _section(request, member_seeds(ctx(request).engine, accounts(request).library, who))


def for_lab(request: Request) -> RadarSection | None:
    """The lab's section; None when no ``[lab]`` is declared."""
    c = ctx(request)
    if not c.config.lab.declared:
        return None
    return _section(request, lab_seeds(c.engine, c.config.lab))
