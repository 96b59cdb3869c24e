"""Parse and validate search parameters into a SearchRequest, and turn one back into a URL.

Every check fails with a :class:`ParamError` that names the parameter and says what would
be accepted; the app turns it into a 400 page or JSON error. The same parser serves the
HTML search page (lenient about parameters it does not know) and the JSON API (strict).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from datetime import date

from starlette.datastructures import QueryParams

from papersift.core.config_search import SearchConfig
from papersift.core.dates import DATE_FORMS, check_order, parse_partial_date
from papersift.core.urls import with_query
from papersift.engine.query_string import default_sort, query_items
from papersift.engine.results import (
    MODES,
    SORTS,
    Filters,
    Mode,
    SearchRequest,
    Sort,
    past_window,
    window_pages,
)

SEARCH_PARAMS = (
    "q", "mode", "category", "researcher", "researcher_id", "institution", "from", "to",
    "sort", "page", "page_size", "autocorrect",
)  # fmt: skip
FLAG_VALUES = {"1": True, "true": True, "yes": True, "on": True,
          "0": False, "false": False, "no": False, "off": False}  # fmt: skip
MAX_FILTER_VALUES = 20
MAX_RESEARCHER_LENGTH = 200
MAX_RESEARCHER_ID = 999_999_999  # the documented maximum of a researcher number
# The largest page number a URL may give: a page past the result window is still a page past
# the last of a list that ends sooner (``views.list_page``).
MAX_PAGE = 10**9
_CATEGORY = re.compile(r"^[A-Za-z][A-Za-z-]{0,30}(?:\.[A-Za-z-]{1,30})?$")
_INT = re.compile(r"^[0-9]{1,12}\Z")  # ASCII digits, bounded before int()


class ParamError(ValueError):
    """A request parameter is malformed or out of range; the message says what is accepted."""

    def __init__(self, parameter: str, message: str) -> None:
        super().__init__(message)
        self.parameter = parameter
        self.message = message


def clean_text(text: str) -> str:
    """Replace control and unpaired-surrogate characters with spaces and collapse whitespace."""
    chars = (" " if unicodedata.category(c) in ("Cc", "Cs", "Cf") else c for c in text)
    return " ".join("".join(chars).split())


def check_params(
    params: QueryParams, known: Sequence[str] = (), single: Collection[str] | None = None
) -> None:
    """The API's rule for a query string: a parameter not in ``known``, or one of ``single``
    (default: all of ``known``) given more than once, is a 400 naming it, rather than a
    typo quietly ignored (``?limt=3``) or a value quietly dropped."""
    for name in params:
        if name not in known:
            takes = f"known: {', '.join(known)}" if known else "this URL takes none"
            raise ParamError(name, f"Unknown parameter {_show(name)}; {takes}.")
    for name in known if single is None else single:
        if len(params.getlist(name)) > 1:
            raise given_twice(name)


def given_twice(name: str) -> ParamError:
    """The 400 of a single-valued parameter given more than once."""
    return ParamError(name, f"Give '{name}' at most once.")


def _single(params: QueryParams, name: str, strict: bool) -> str:
    values = params.getlist(name)
    if not values:
        return ""
    if strict and len(values) > 1:
        raise given_twice(name)
    return values[-1].strip()


def _choice(params: QueryParams, name: str, choices: Collection[str], strict: bool) -> str:
    """One of ``choices`` in any case (``KEYWORD``, as categories are), lower-cased."""
    value = _single(params, name, strict)
    if value and value.lower() not in choices:
        raise ParamError(name, f"Unknown {name} {_show(value)}; use one of: {', '.join(choices)}.")
    return value.lower()


def _show(value: str, limit: int = 40) -> str:
    """Quote a user value for an error message, shortened."""
    return repr(value if len(value) <= limit else value[:limit] + "…")


def whole_number(name: str, raw: str, maximum: int, minimum: int = 1) -> int:
    """``raw`` as a whole number in minimum..maximum, else ParamError naming ``name``.

    The one parser of integer URL and query parameters: the length is bounded before
    ``int()``, which is quadratic in the digits and refuses more than 4,300 of them.
    """
    if not _INT.match(raw) or not minimum <= int(raw) <= maximum:
        raise ParamError(
            name,
            f"'{name}' must be a whole number from {minimum} to {maximum}, not {_show(raw)}.",
        )
    return int(raw)


def int_param(params: QueryParams, name: str, default: int, maximum: int) -> int:
    """Query parameter ``name`` (last given) as a whole number 1..maximum, else the default."""
    raw = params.get(name)
    return default if raw is None else whole_number(name, raw.strip(), maximum)


def _flag(params: QueryParams, name: str, default: bool, strict: bool) -> bool:
    """``1``/``0`` (or true/false, yes/no, on/off, any case); empty: the default."""
    value = _single(params, name, strict).lower()
    if value and value not in FLAG_VALUES:
        raise ParamError(name, f"'{name}' must be 1 or 0 (true or false), not {_show(value)}.")
    return FLAG_VALUES.get(value, default)


def _int(params: QueryParams, name: str, default: int, maximum: int, strict: bool) -> int:
    raw = _single(params, name, strict)
    return whole_number(name, raw, maximum) if raw else default


def parse_date(name: str, raw: str, *, end: bool) -> date | None:
    """``2024`` / ``2024-05`` / ``2024-05-17`` as ``core.dates`` reads them (the CLI too); a
    partial date is its first or (end) last day. None if empty, else ParamError."""
    if not raw:
        return None
    try:
        return parse_partial_date(raw, end=end)
    except ValueError:
        raise ParamError(
            name, f"'{name}' must be a date such as {DATE_FORMS}, not {_show(raw)}."
        ) from None


def check_dates(date_from: date | None, date_to: date | None) -> None:
    """ParamError if 'from' is after 'to' (``core.dates.check_order``, as the CLI checks)."""
    try:
        check_order(date_from, date_to)
    except ValueError as exc:
        raise ParamError("from", str(exc)) from None


def _categories(params: QueryParams, known: Mapping[str, str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for raw in params.getlist("category"):
        for value in raw.split(","):
            value = value.strip()
            if not value:
                continue
            if not _CATEGORY.match(value):
                raise ParamError(
                    "category", f"{_show(value)} is not a category; use a code such as cs.IR or cs."
                )
            if known is not None:
                canonical = known.get(value.lower())
                if canonical is None:
                    raise ParamError(
                        "category",
                        f"Unknown category {_show(value)}: no paper in this index has it. "
                        "See /categories for the list.",
                    )
                value = canonical
            if value not in out:
                out.append(value)
    if len(out) > MAX_FILTER_VALUES:
        raise ParamError("category", f"Give at most {MAX_FILTER_VALUES} categories.")
    return tuple(out)


def _researchers(params: QueryParams) -> tuple[str, ...]:
    out: list[str] = []
    for raw in params.getlist("researcher"):
        value = clean_text(raw)
        if len(raw) > MAX_RESEARCHER_LENGTH:  # as sent: the documented maxLength
            raise ParamError(
                "researcher",
                f"A researcher name may have at most {MAX_RESEARCHER_LENGTH} characters.",
            )
        if value and value not in out:
            out.append(value)
    if len(out) > MAX_FILTER_VALUES:
        raise ParamError("researcher", f"Give at most {MAX_FILTER_VALUES} researchers.")
    return tuple(out)


def _researcher_ids(params: QueryParams) -> tuple[int, ...]:
    out: list[int] = []
    for raw in params.getlist("researcher_id"):
        for value in raw.split(","):
            value = value.strip()
            if not value:
                continue
            if not _INT.match(value) or not 1 <= int(value) <= MAX_RESEARCHER_ID:
                raise ParamError(
                    "researcher_id",
                    f"'researcher_id' must be a researcher number such as 42, not {_show(value)}.",
                )
            if int(value) not in out:
                out.append(int(value))
    if len(out) > MAX_FILTER_VALUES:
        raise ParamError("researcher_id", f"Give at most {MAX_FILTER_VALUES} researcher ids.")
    return tuple(out)


def _institutions(params: QueryParams, known: Callable[[str], bool] | None) -> tuple[str, ...]:
    """``institution=03acrzv41`` (a ROR id, bare or as its ror.org URL), repeatable; with
    ``known``, one no paper has is refused, as an unknown category is."""
    from papersift.engine.ror import parse_ror_id

    out: list[str] = []
    for raw in params.getlist("institution"):
        for value in raw.split(","):
            value = value.strip()
            if not value:
                continue
            ror_id = parse_ror_id(value)
            if ror_id is None:
                raise ParamError(
                    "institution",
                    f"'institution' must be a ROR id such as 03acrzv41, not {_show(value)}.",
                )
            if known is not None and not known(ror_id):
                raise ParamError(
                    "institution",
                    f"Unknown institution {_show(value)}: no paper in this index has it. "
                    "See /institutions for the list.",
                )
            if ror_id not in out:
                out.append(ror_id)
    if len(out) > MAX_FILTER_VALUES:
        raise ParamError("institution", f"Give at most {MAX_FILTER_VALUES} institutions.")
    return tuple(out)


def parse_search(
    params: QueryParams,
    config: SearchConfig,
    *,
    strict: bool = False,
    known_categories: Mapping[str, str] | None = None,
    known_institution: Callable[[str], bool] | None = None,
    window: bool = True,
) -> SearchRequest:
    """Build the SearchRequest a query string asks for, or raise ParamError.

    ``strict`` (the API) also rejects unknown parameters and repeated single-valued ones;
    ``known_categories`` (lower-cased category or archive -> its spelling in the index)
    fixes the case of category filters and rejects those that can match nothing;
    ``known_institution`` (whether a paper has a bare ROR id) rejects such institutions.
    ``window=False`` lets a page past the result window through, for a caller that knows
    how long its list is (``views.list_page``).
    """
    if strict:
        check_params(params, SEARCH_PARAMS, single=())  # each single one: ``_single``
    # The length as sent (the documented maxLength), not after control characters and
    # runs of whitespace are cleaned away.
    sent = max((len(v) for v in params.getlist("q")), default=0)
    if sent > config.max_text_length:
        raise ParamError(
            "q",
            f"The query has {sent:,} characters; the limit is {config.max_text_length:,}.",
        )
    query = clean_text(_single(params, "q", strict))
    mode = _choice(params, "mode", MODES, strict)
    sort = _choice(params, "sort", SORTS, strict)
    page_size = _int(params, "page_size", config.page_size, config.max_page_size, strict)
    page = _int(params, "page", 1, MAX_PAGE, strict)
    if window and page * page_size > config.max_window:
        raise window_error(config.max_window, page_size, page)
    date_from = parse_date("from", _single(params, "from", strict), end=False)
    date_to = parse_date("to", _single(params, "to", strict), end=True)
    check_dates(date_from, date_to)
    filters = Filters(
        categories=_categories(params, known_categories),
        researchers=_researchers(params),
        date_from=date_from,
        date_to=date_to,
        researcher_ids=_researcher_ids(params),
        institutions=_institutions(params, known_institution),
    )
    chosen: Sort = _as_sort(sort) if sort else default_sort(query)
    if not query and chosen == "relevance":
        chosen = "newest"  # nothing to rank by: browse
    return SearchRequest(
        query=query,
        mode=_as_mode(mode) if mode else None,
        filters=filters,
        sort=chosen,
        page=page,
        page_size=page_size if page_size != config.page_size else None,
        autocorrect=_flag(params, "autocorrect", True, strict),
    )


def window_last_page(pages: int, page_size: int, max_window: int) -> int:
    """The last of ``pages`` pages that may be asked for: no page past the first
    ``max_window`` results (``parse_search`` refuses them)."""
    return max(1, min(pages, window_pages(max_window, page_size)))


def window_error(max_window: int, page_size: int, page: int) -> ParamError:
    """The 400 for a page past the result window, worded as the engine's and the CLI's
    (``engine.results.past_window``). It names the window's last page, not the list's: a
    caller that knows the list ends sooner answers the empty page after it instead
    (``views.list_page``)."""
    text = past_window(page, page_size, max_window)
    return ParamError("page", f"{text[0].upper()}{text[1:]}.")


def _as_mode(value: str) -> Mode:
    for m in MODES:
        if m == value:
            return m
    raise AssertionError(value)


def _as_sort(value: str) -> Sort:
    for s in SORTS:
        if s == value:
            return s
    raise AssertionError(value)


def search_url(req: SearchRequest, path: str = "/search", **changes: object) -> str:
    """URL of ``req`` with fields replaced; any change but ``page`` goes back to page 1."""
    if changes and "page" not in changes:
        changes["page"] = 1
    new = replace(req, **changes)  # type: ignore[arg-type]
    return with_query(path, query_items(new))


def with_filters(req: SearchRequest, **changes: object) -> str:
    """Search URL with the filters changed (``categories=...`` etc.), back on page 1."""
    return search_url(req, filters=replace(req.filters, **changes))  # type: ignore[arg-type]
