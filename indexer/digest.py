"""What one member's e-mail digest holds for one window: a pure read of the engine.

For each tag the member chose, the recommender's top papers of the window
(``engine.recommend``, seeded by the tag's papers: only those close to them, above its floor,
so a tag with nothing close in the window has no section); for each saved search, its new
matches in the window (its words, search mode and filters), newest first; for each followed
researcher, their new papers. A paper that several of them match is listed and counted
once, in the first; the later ones name it as listed above, so the member still sees every
reason it is there. A digest with no section is not sent (``indexer.digest_run``). Windows
are aligned (the day before, or the last full ISO week), so a window has one stable key and
a digest is sent once per key however often the job runs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import date, timedelta

from papersift.core.errors import QueryError
from papersift.core.paper import Paper
from papersift.core.urls import researcher_url, with_query
from papersift.engine.members import Member
from papersift.engine.query_string import query_items
from papersift.engine.recommend import recommend
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine
from papersift.engine.subscriptions import SavedSearch, Subscriptions


@dataclass(frozen=True, slots=True)
class Window:
    kind: str  # daily or weekly
    start: date
    end: date  # inclusive

    @property
    def key(self) -> str:
        """``daily:2026-12-03`` or ``weekly:2026-W48``: what a send is recorded under."""
        if self.kind == "daily":
            return f"daily:{self.start.isoformat()}"
        year, week, _ = self.start.isocalendar()
        return f"weekly:{year}-W{week:02d}"

    def label(self) -> str:
        if self.start == self.end:
            return self.start.isoformat()
        return f"{self.start.isoformat()} to {self.end.isoformat()}"


def window_for(kind: str, today: date) -> Window:
    """The last complete window before ``today``: yesterday, or last Monday-to-Sunday.

    QueryError when ``today`` is so early that the window would begin before 0001-01-01.
    """
    try:
        if kind == "daily":
            day = today - timedelta(days=1)
            return Window("daily", day, day)
        if kind == "weekly":
            monday = today - timedelta(days=today.weekday() + 7)
            return Window("weekly", monday, monday + timedelta(days=6))
    except OverflowError:  # date.min is 0001-01-01
        raise QueryError(
            f"{today.isoformat()} is too early a date for a {kind} digest: its window "
            f"({'the day before' if kind == 'daily' else 'the full week before'}) "
            "would begin before 0001-01-01"
        ) from None
    raise ValueError(f"no window for digest {kind!r}")


@dataclass(frozen=True, slots=True)
class Section:
    kind: str  # tag, search or researcher
    title: str
    path: str  # the page on this site with the whole list
    papers: tuple[Paper, ...]  # listed here: no earlier section has them
    listed_above: tuple[Paper, ...] = ()  # its matches that an earlier section lists


@dataclass(frozen=True, slots=True)
class Digest:
    member: Member
    window: Window
    sections: tuple[Section, ...]  # only those with papers
    chosen: int  # sections the member chose (with or without papers)
    # New papers a tag weighed and found none close to (the most any one tag weighed): so an
    # empty digest can say "nothing close among 40 new papers" rather than "nothing new".
    weighed: int = 0

    @property
    def empty(self) -> bool:
        return not self.sections

    @property
    def papers(self) -> int:
        """Distinct papers: each is listed in one section only."""
        return sum(len(s.papers) for s in self.sections)

    def also_in(self, paper: Paper) -> list[str]:
        """The titles of the later sections that match ``paper`` too."""
        return [s.title for s in self.sections
                if any(p.arxiv_id == paper.arxiv_id for p in s.listed_above)]  # fmt: skip


def _once(sections: list[Section]) -> tuple[Section, ...]:
    """Each paper in the first section that has it; the later ones keep it as listed above.

    Sections without matches are left out.
    """
    seen: set[str] = set()
    kept: list[Section] = []
    for section in sections:
        if not section.papers:
            continue
        new = tuple(p for p in section.papers if p.arxiv_id not in seen)
        above = tuple(p for p in section.papers if p.arxiv_id in seen)
        seen.update(p.arxiv_id for p in new)
        kept.append(dataclasses.replace(section, papers=new, listed_above=above))
    return tuple(kept)


def _dates(window: Window) -> dict[str, str]:
    return {"from": window.start.isoformat(), "to": window.end.isoformat()}


def _search_section(
    engine: SearchEngine, search: SavedSearch, window: Window, per_section: int
) -> Section | None:
    """A saved search's new matches: its words, mode and filters, its dates narrowed to the
    window (None if they end before it or begin after it, or the engine refuses it)."""
    saved = search.filters
    start = max(window.start, saved.date_from or window.start)
    end = min(window.end, saved.date_to or window.end)
    if start > end:
        return None
    # As typed, as its feed lists it: a standing query never follows a spelling suggestion.
    req = dataclasses.replace(
        search.request(), filters=dataclasses.replace(saved, date_from=start, date_to=end),
        sort="newest", autocorrect=False,
    )  # fmt: skip
    try:
        result = engine.search(dataclasses.replace(req, page_size=per_section))
    except QueryError:
        return None
    path = with_query("/search", query_items(req))
    hits = tuple(h.paper for h in result.hits)
    return Section("search", f"New for {search.describe()}", path, hits)


def compose(
    engine: SearchEngine, subs: Subscriptions, member: Member, window: Window, per_section: int
) -> Digest:
    """The member's digest for ``window``: sections without new papers (or, for a tag,
    without any close to its papers) are left out, and a paper several sections match is
    listed in the first (``_once``)."""
    choice = subs.choice(member.id)
    per_section = min(per_section, engine.config.search.max_page_size)
    filters = Filters(date_from=window.start, date_to=window.end)
    sections: list[Section] = []
    weighed = 0
    for tag_id in choice.tag_ids:
        tag = subs.library.tag(member.id, tag_id)
        seeds = [s.arxiv_id for s in subs.library.saved(member.id, tag_id)]
        if tag is None or not seeds:
            continue
        try:
            found = recommend(engine, seeds, filters, 1, per_section)
        except QueryError:  # every seed gone from the index: nothing to model
            continue
        if not found.hits:
            weighed = max(weighed, found.ranked)
        path = with_query(f"/library/{tag_id}/recommended", _dates(window))
        sections.append(
            Section("tag", f"Recommended for {tag.name}", path, tuple(h.paper for h in found.hits))
        )
    for search in choice.searches:
        if (section := _search_section(engine, search, window, per_section)) is not None:
            sections.append(section)
    for rid in choice.researchers:
        person = engine.people.get(rid)
        if person is None:
            continue
        req = SearchRequest(
            filters=dataclasses.replace(filters, researcher_ids=(rid,)), sort="newest",
            page_size=per_section,
        )  # fmt: skip
        result = engine.search(req)
        path = researcher_url(person.rid, person.name)
        sections.append(
            Section("researcher", f"New papers by {person.name}", path,
                    tuple(h.paper for h in result.hits))
        )  # fmt: skip
    chosen = len(choice.tag_ids) + len(choice.searches) + len(choice.researchers)
    return Digest(member, window, _once(sections), chosen, weighed)
