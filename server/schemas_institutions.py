"""The institution responses of the JSON API, declared once as msgspec Structs (the routes
encode them; ``server.openapi`` generates their OpenAPI components)."""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta, Struct

from papersift.core.urls import institution_url, researcher_url, with_query
from papersift.engine import affiliation_match, institutions
from papersift.engine.affiliation_match import Explained
from papersift.engine.ror import ROR_PREFIX
from papersift.engine.serialize import Count
from papersift.server.schemas import Uri


class Institution(Struct):
    id: Annotated[int, Meta(ge=1, description="Stable; never reused.")]
    ror: Uri
    name: str
    country: str
    city: str
    types: list[str]
    url: Uri
    papers_url: Uri


class InstitutionList(Struct):
    """One page of institutions whose name holds every word of ``q``, by name."""

    q: str
    total: Count
    page: Annotated[int, Meta(ge=1)]
    institutions: list[Institution]
    next: Annotated[str | None, Meta(description="URL of the next page, if any.")]


class Member(Struct):
    """A researcher linked to the institution."""

    id: Annotated[int, Meta(ge=1)]
    name: str
    papers: Count
    url: Uri


class InstitutionDetail(Institution):
    aliases: list[str]
    status: str
    parents: list[Institution]
    papers: Annotated[int, Meta(ge=0, description="Papers linked by enrichment.")]
    researchers: Count
    members: list[Member]


class InstitutionResponse(Struct):
    institution: InstitutionDetail


class AffiliationMatch(Explained):
    """An affiliation string, the ROR organisation it names (or none), why, and that
    organisation as this index holds it."""

    institution: Institution | None


Base = tuple[int, str, str, str, str, list[str], str, str]


def _base(i: institutions.Institution, root: str) -> Base:
    """The fields every institution form starts with, in order."""
    url = root + institution_url(i.iid, i.name)
    papers_url = root + with_query("/api/v1/search", {"institution": i.ror_id})
    return i.iid, ROR_PREFIX + i.ror_id, i.name, i.country, i.city, list(i.types), url, papers_url


def institution_body(i: institutions.Institution, root: str) -> Institution:
    return Institution(*_base(i, root))


def list_body(q: str, total: int, page: int, found: list[institutions.Institution], root: str,
              next_url: str | None) -> InstitutionList:  # fmt: skip
    return InstitutionList(q, total, page, [institution_body(i, root) for i in found], next_url)


def detail_body(
    i: institutions.Institution,
    root: str,
    *,
    parents: list[institutions.Institution],
    linked: tuple[int, int],
    members: list[tuple[int, str, int]],
) -> InstitutionResponse:
    papers, people = linked
    return InstitutionResponse(
        InstitutionDetail(
            *_base(i, root),
            aliases=list(i.aliases),
            status=i.status,
            parents=[institution_body(p, root) for p in parents],
            papers=papers,
            researchers=people,
            members=[
                Member(rid, name, n, root + researcher_url(rid, name)) for rid, name, n in members
            ],
        )
    )


def match_body(found: affiliation_match.AffiliationMatch, root: str) -> AffiliationMatch:
    why = affiliation_match.as_json(found)
    inst = found.institution
    return AffiliationMatch(
        why.affiliation,
        why.match,
        why.reason,
        why.parts,
        why.places,
        why.candidates,
        institution=institution_body(inst, root) if inst is not None else None,
    )
