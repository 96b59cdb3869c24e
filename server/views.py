"""The search page's view model: facet links, filter chips, pagination, mode and sort switches."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

from papersift.core.config_search import SearchConfig
from papersift.core.errors import WindowError
from papersift.core.taxonomy import category_name
from papersift.engine.list_page import list_page as engine_list_page
from papersift.engine.results import MODES, SORTS, Filters, SearchRequest, SearchResult
from papersift.engine.search import SearchEngine
from papersift.server.params import search_url, window_error, window_last_page, with_filters

SORT_LABELS = {
    "relevance": "Relevance",
    "newest": "Newest",
    "oldest": "Oldest",
    "cited": "Most cited",
}
MODE_LABELS = {"hybrid": "Hybrid", "keyword": "Keyword", "semantic": "Semantic"}
FACET_LIMIT = 15  # facet values shown at first; the search page folds the rest away


@dataclass(frozen=True, slots=True)
class Link:
    label: str
    url: str
    active: bool = False
    count: int | None = None
    title: str = ""


def _year_bounds(year: int) -> tuple[date, date]:
    return date(year, 1, 1), date(year, 12, 31)


def category_facets(result: SearchResult) -> list[Link]:
    """Every category the search counted, most papers first, each toggling its filter."""
    req = result.request
    chosen = req.filters.categories
    out = []
    for fc in result.facets.get("categories", ()):
        active = fc.value in chosen
        cats = tuple(c for c in chosen if c != fc.value) if active else (*chosen, fc.value)
        out.append(
            Link(
                fc.value,
                with_filters(req, categories=cats),
                active,
                fc.count,
                category_name(fc.value),
            )
        )
    return out


def year_facets(result: SearchResult) -> list[Link]:
    """Every year the search counted, newest first, each toggling that year's date filter."""
    req = result.request
    out = []
    for fc in result.facets.get("years", ()):
        if not fc.value.isdecimal():
            continue
        start, end = _year_bounds(int(fc.value))
        active = (req.filters.date_from, req.filters.date_to) == (start, end)
        url = (
            with_filters(req, date_from=None, date_to=None)
            if active
            else with_filters(req, date_from=start, date_to=end)
        )
        out.append(Link(fc.value, url, active, fc.count))
    return out


def facet_window_note(result: SearchResult) -> str:
    """What the researchers and institutions facets counted, when not every result (their
    counts cost most over long lists: ``engine.list_facets.PEOPLE_WINDOW``); else ""."""
    window = result.facet_window
    if window is None:
        return ""
    by_meaning = result.mode != "keyword" and result.request.sort != "relevance"
    which = f"the {window:,} most relevant" if by_meaning else f"the first {window:,}"
    return f"Counted among {which} of {result.total:,} results; the filter may find more."


def filter_chips(result: SearchResult) -> list[Link]:
    """One removable chip per active filter."""
    req = result.request
    f = req.filters
    chips = [
        Link(
            f"Category: {c}", with_filters(req, categories=tuple(x for x in f.categories if x != c))
        )
        for c in f.categories
    ]
    chips += [
        Link(
            f"Researcher: {r}",
            with_filters(req, researchers=tuple(x for x in f.researchers if x != r)),
        )
        for r in f.researchers
    ]
    if f.date_from or f.date_to:
        span = f"{f.date_from or '…'} to {f.date_to or '…'}"
        chips.append(Link(f"Published: {span}", with_filters(req, date_from=None, date_to=None)))
    return chips


def clear_filters_url(result: SearchResult) -> str:
    return search_url(result.request, filters=Filters())


def sort_links(result: SearchResult, cited: bool = True) -> list[Link]:
    """The sort switch; "Most cited" only when some paper has a citation count (``cited``)
    or the page is sorted that way already."""
    req = result.request
    sorts = SORTS if req.query else tuple(s for s in SORTS if s != "relevance")
    if not cited and req.sort != "cited":
        sorts = tuple(s for s in sorts if s != "cited")
    return [Link(SORT_LABELS[s], search_url(req, sort=s), req.sort == s) for s in sorts]


def mode_links(result: SearchResult) -> list[Link]:
    req = result.request
    return [Link(MODE_LABELS[m], search_url(req, mode=m), result.mode == m) for m in MODES]


def last_page(result: SearchResult, max_window: int) -> int:
    """The last page of ``result`` that may be asked for (within the result window)."""
    return window_last_page(result.pages, result.page_size, max_window)


def past_last(result: SearchResult, max_window: int) -> str | None:
    """A note for a page past the last one (empty, though the search may match), else None."""
    last = last_page(result, max_window)
    if result.hits or result.page <= last:
        return None
    return f"page {result.page:,} is past the last page ({last:,})"


def list_page(engine: SearchEngine, req: SearchRequest, config: SearchConfig) -> SearchResult:
    """One page of a list that has its own end (a search's, a category's or a researcher's
    papers), for a request parsed with ``window=False``: a page past the result window is
    the empty page after the last one when the list ends inside the window, else the
    window's 400 (``engine.list_page``)."""
    try:
        return engine_list_page(engine, req, config)
    except WindowError:
        raise window_error(config.max_window, req.page_size or config.page_size, req.page) from None


@dataclass(frozen=True, slots=True)
class WindowNote:
    """A list that runs on past the pages that can be asked for (the result window): how
    many results the pages reach, and links that reach the rest."""

    shown: int  # results the pages reach
    total: int
    sort_link: Link | None  # the other date order, which starts at the other end of the list
    # On the last page of a date-sorted list: the date filter that continues it, as
    # (parameter, day), and the search page with it.
    continue_from: tuple[str, date] | None = None
    continue_link: Link | None = None

    def text(self) -> str:
        """The note as one line (the API's warnings): what is cut and how to see the rest."""
        other = f", or {self.sort_link.label}," if self.sort_link else ""
        line = (
            f"only the first {self.shown:,} of {self.total:,} results can be paged through: "
            f"narrow by year or other filters{other} to see the rest"
        )
        if self.continue_from:
            name, day = self.continue_from
            # The filter holds the page's last day whole: that day's papers shown here come
            # again (a date has no finer order to continue from).
            line += (
                f" ({name}={day.isoformat()} continues this list from this page's last day;"
                " that day's papers on this page come again)"
            )
        return line

    def relinked(self, url: Callable[[str], str]) -> WindowNote:
        """The note with each link's URL passed through ``url`` (a list on a page of its own,
        such as a researcher's, rather than the search page)."""
        sort = replace(self.sort_link, url=url(self.sort_link.url)) if self.sort_link else None
        more = self.continue_link
        return replace(
            self, sort_link=sort, continue_link=replace(more, url=url(more.url)) if more else None
        )


def window_note(
    result: SearchResult, max_window: int, *, sortable: bool = True
) -> WindowNote | None:
    """The note for ``result`` when its pages end before its results do, else None;
    ``sortable``: the list can be asked for in date order (a search, not similar text)."""
    reach = result.total if result.reachable is None else min(result.total, result.reachable)
    last = last_page(result, max_window)
    reach = min(reach, last * result.page_size)
    if reach >= result.total:
        return None
    req = result.request
    other = "newest" if req.sort == "oldest" else "oldest"
    sort_link = Link(f"sort {other} first", search_url(req, sort=other)) if sortable else None
    note = WindowNote(reach, result.total, sort_link)
    if result.page != last or not result.hits or req.sort not in ("newest", "oldest"):
        return note
    # Dates filter inclusively: the last hit's day comes again, so no paper is skipped; a
    # window that is all one day (already filtered to it) has no further step to offer.
    day = result.hits[-1].paper.published
    if day in (req.filters.date_to, req.filters.date_from):
        return note
    name, side = ("to", "before") if req.sort == "newest" else ("from", "after")
    url = with_filters(req, **{f"date_{name}": day})
    label = f"Continue with the papers published on or {side} {day.day} {day:%b %Y}"
    return replace(note, continue_from=(name, day), continue_link=Link(label, url))


def pagination(result: SearchResult, max_window: int) -> dict[str, object]:
    """Previous/next links, a window of page numbers (None marks a gap) and, when the
    pages end before the results do, the note that says so (``truncated``)."""
    req = result.request
    last = last_page(result, max_window)
    page = result.page
    numbers = sorted({1, last, *range(max(1, page - 2), min(last, page + 2) + 1)})
    items: list[Link | None] = []
    prev = 0
    for n in numbers:
        if n - prev > 1:
            items.append(None)
        items.append(Link(str(n), search_url(req, page=n), n == page))
        prev = n
    return {
        "prev": search_url(req, page=page - 1) if page > 1 else None,
        "next": search_url(req, page=page + 1) if page < last else None,
        "items": items if last > 1 else [],
        "truncated": window_note(result, max_window),
    }
