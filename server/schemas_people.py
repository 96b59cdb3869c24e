"""The researcher responses of the JSON API, declared once as msgspec Structs (the routes
encode them; ``server.openapi`` generates their OpenAPI components)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from papersift.core.urls import researcher_url, with_query
from papersift.engine import people
from papersift.engine.serialize import Count
from papersift.server.schemas import Uri


class Researcher(Struct):
    id: Annotated[int, Meta(ge=1, description="Stable; never reused.")]
    name: str
    papers: Count
    collective: Annotated[bool, Meta(description="A collaboration or group.")]
    url: Uri
    papers_url: Uri


class ResearcherList(Struct):
    """One page of researchers with a name, in any spelling their papers record, that has
    a word starting with each word of ``q`` (accents and case aside), most papers first."""

    q: str
    total: Count
    page: Annotated[int, Meta(ge=1)]
    researchers: list[Researcher]
    next: Annotated[str | None, Meta(description="URL of the next page, if any.")]


class Positions(Struct):
    """Where in the author lists the researcher's papers name them."""

    first: Count
    middle: Count
    last: Count
    solo: Count
    known: Count


class YearCount(Struct):
    year: int
    papers: Count


class CategoryCount(Struct):
    category: str
    papers: Count


class Coauthor(Researcher):
    shared: Count


class SameName(Researcher):
    """A similar name kept apart, and why."""

    reason: str


class Profile(Researcher):
    ids: Annotated[dict[str, str], Meta(description="orcid, openalex, s2 where known.")]
    variants: Annotated[list[str], Meta(description="Spellings seen.")]
    positions: Positions
    years: list[YearCount]
    categories: list[CategoryCount]
    coauthors: list[Coauthor]
    same_name: list[SameName]


class ResearcherResponse(Struct):
    researcher: Profile


def _base(r: people.Researcher, root: str) -> tuple[int, str, int, bool, str, str]:
    """The fields every researcher form starts with, in order."""
    url = root + researcher_url(r.rid, r.name)
    papers_url = root + with_query("/api/v1/search", {"researcher_id": r.rid})
    return r.rid, r.name, r.papers, r.collective, url, papers_url


def researcher_body(r: people.Researcher, root: str) -> Researcher:
    return Researcher(*_base(r, root))


def list_body(q: str, total: int, page: int, found: list[people.Researcher], root: str,
              next_url: str | None) -> ResearcherList:  # fmt: skip
    return ResearcherList(q, total, page, [researcher_body(r, root) for r in found], next_url)


def profile_body(p: people.Profile, root: str) -> ResearcherResponse:
    r = p.researcher
    pos = p.positions
    profile = Profile(
        *_base(r, root),
        ids=dict(r.ids),
        variants=list(r.variants),
        positions=Positions(
            first=pos.get("first", 0),
            middle=pos.get("middle", 0),
            last=pos.get("last", 0),
            solo=pos.get("solo", 0),
            known=sum(pos.values()),
        ),
        years=[YearCount(y, n) for y, n in p.years],
        categories=[CategoryCount(c, n) for c, n in p.categories],
        coauthors=[Coauthor(*_base(c, root), shared=n) for c, n in p.coauthors],
        same_name=[SameName(*_base(s.researcher, root), reason=s.reason) for s in p.same_name],
    )
    return ResearcherResponse(profile)
