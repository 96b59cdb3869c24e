"""The site's URL forms, built in one place: paper, researcher and institution paths, arXiv
links, and query strings (always encoded, so ``q="an & b"`` or ``q="a#b"`` survive a link)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from urllib.parse import urlencode

from papersift.core.paper import Paper
from papersift.core.tex import ascii_words

SLUG_WORDS = 10  # a paper slug: the title's first words ...
SLUG_CHARS = 80  # ... up to this many characters
NAME_SLUG_WORDS = 8  # a researcher or institution slug

QueryValue = str | int | float | None
Query = Mapping[str, QueryValue | Iterable[str]] | Iterable[tuple[str, QueryValue]]


def slug(text: str, words: int = NAME_SLUG_WORDS, chars: int = SLUG_CHARS) -> str:
    """``Biblioth\\`eque de la communaut\\'e`` -> ``bibliotheque-de-la-communaute``,
    ``Zero Bubble $\\alpha$-Pipeline`` -> ``zero-bubble-alpha-pipeline``: the ASCII words of
    the text with its TeX read (:func:`papersift.core.tex.ascii_words`), at most ``words``
    of them and ``chars`` characters; "" when nothing Latin is left."""
    out = ""
    for word in ascii_words(text)[:words]:
        candidate = f"{out}-{word}" if out else word
        if len(candidate) > chars:
            break
        out = candidate
    return out


def slugify(title: str) -> str:
    """A paper title's slug (``paper`` when the title has no Latin word)."""
    return slug(title, SLUG_WORDS) or "paper"


def with_query(path: str, params: Query) -> str:
    """``path?a=1&b=x`` with every value encoded; None and "" values are left out, and a
    list value repeats its key. No query string at all when nothing is left."""
    items = params.items() if isinstance(params, Mapping) else params
    pairs: list[tuple[str, str]] = []
    for key, value in items:
        values = value if isinstance(value, list | tuple) else [value]
        pairs += [(key, str(v)) for v in values if v is not None and v != ""]
    return f"{path}?{urlencode(pairs)}" if pairs else path


def paper_path(paper: Paper) -> str:
    """The canonical path of a paper's page: ``/papers/2401.10241-zero-bubble-...``."""
    return f"/papers/{paper.arxiv_id}-{slugify(paper.title)}"


def researcher_url(rid: int, name: str) -> str:
    """The canonical page of a researcher: ``/researchers/42-balazs-kegl``."""
    s = slug(name)
    return f"/researchers/{rid}-{s}" if s else f"/researchers/{rid}"


def institution_url(iid: int, name: str) -> str:
    """The canonical page of an institution: ``/institutions/7-university-of-oxford``."""
    s = slug(name)
    return f"/institutions/{iid}-{s}" if s else f"/institutions/{iid}"


def name_search_path(name: str) -> str:
    """Where an author name links until researcher pages exist: the researcher filter."""
    return with_query("/search", {"researcher": name})


def category_path(category: str) -> str:
    return f"/categories/{category}"


def category_feed(category: str) -> str:
    return f"/rss/{category}.xml"


LATEST_FEED = "/rss/latest.xml"


def arxiv_abs(arxiv_id: str, version: int | None = None) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}" + (f"v{version}" if version else "")


def arxiv_pdf(arxiv_id: str) -> str:
    return f"https://arxiv.org/pdf/{arxiv_id}"


VERSION_LINKS = 12  # a paper page links at most this many versions, then "all N"


def version_links(paper: Paper) -> list[tuple[str, str]]:
    """(label, URL) of the versions a paper page links: all of a few, else the first and the
    latest ones and a link to arXiv's page, which lists them all. Bounded whatever the
    stored version (ingest bounds it too: ``papersift.core.paper.MAX_VERSION``)."""
    n = paper.version
    if n <= VERSION_LINKS:
        return [(f"v{v}", arxiv_abs(paper.arxiv_id, v)) for v in range(1, n + 1)]
    shown = [1, *range(n - VERSION_LINKS + 2, n + 1)]
    links = [(f"v{v}", arxiv_abs(paper.arxiv_id, v)) for v in shown]
    links.insert(1, (f"… all {n:,} versions", arxiv_abs(paper.arxiv_id)))
    return links
