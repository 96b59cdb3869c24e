"""The home page's "this lab" section: the declared ``[lab]``, its members as researchers
(found by the ORCID anchoring gave them), their latest papers, and its JSON-LD."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from papersift.core.config import Config, LabConfig
from papersift.core.urls import institution_url, researcher_url
from papersift.engine.results import Hit
from papersift.engine.search import SearchEngine
from papersift.indexer.lab_report import Unlinked, unlinked_members

ORCID_URL = "https://orcid.org/"
SNIPPET = 300
HOME_PAPERS = 5  # latest papers of the lab on the home page


@dataclass(frozen=True, slots=True)
class MemberView:
    name: str  # as declared
    orcid: str
    url: str | None  # the researcher page; None until a paper of theirs is anchored
    papers: int


@dataclass(frozen=True, slots=True)
class LabSection:
    name: str
    institution: str | None  # the ROR registry's name of [lab] ror, if imported
    institution_url: str | None
    members: tuple[MemberView, ...]
    latest: tuple[Hit, ...]
    papers: int  # by any member
    search_url: str | None  # the full search for the members' papers

    def jsonld(self, root: str) -> dict[str, Any]:
        """schema.org Organization with its members (Person, ORCID as identifier)."""
        ld: dict[str, Any] = {
            "@context": "https://schema.org",
            "@type": "Organization",
            "name": self.name,
            "url": root + "/",
        }
        if self.institution:
            parent: dict[str, Any] = {"@type": "Organization", "name": self.institution}
            if self.institution_url:
                parent["url"] = root + self.institution_url
            ld["parentOrganization"] = parent
        ld["member"] = [
            {
                "@type": "Person",
                "name": m.name,
                "identifier": ORCID_URL + m.orcid,
                "sameAs": [ORCID_URL + m.orcid],
                **({"url": root + m.url} if m.url else {}),
            }
            for m in self.members
        ]
        return ld


def lab_section(
    engine: SearchEngine, lab: LabConfig, limit: int, max_query: int
) -> LabSection | None:
    """The section for a declared lab; None when ``[lab]`` is empty."""
    if not lab.declared:
        return None
    inst = engine.institutions.by_ror(lab.ror) if lab.ror else None
    members, rids = [], []
    for m in lab.members:
        found = engine.people.with_orcid(m.orcid)
        rids += [r for r, _, _ in found]
        url = researcher_url(found[0][0], found[0][1]) if found else None
        members.append(MemberView(m.name, m.orcid, url, sum(p for _, _, p in found)))
    latest: list[Hit] = []
    total = 0
    if rids:
        papers, total = engine.newest_papers_of(rids, limit)
        for p in papers:
            text = p.abstract if len(p.abstract) <= SNIPPET else p.abstract[:SNIPPET] + " …"
            latest.append(Hit(p, 0.0, html.escape(p.title), html.escape(text), {}))
    # Fielded clauses are all required unless joined by OR: any member's papers.
    clauses = " OR ".join(f'au:"{m.name}"' for m in lab.members if '"' not in m.name)
    search = "/search?" + urlencode({"q": clauses, "sort": "newest"}) if clauses else None
    if search and len(clauses) > max_query:
        search = f"/search?{urlencode({'institution': lab.ror})}" if lab.ror else None
    name = lab.name or (inst.name if inst else "") or "This lab"
    return LabSection(
        name=name,
        institution=inst.name if inst else None,
        institution_url=institution_url(inst.iid, inst.name) if inst else None,
        members=tuple(members),
        latest=tuple(latest),
        papers=total,
        search_url=search,
    )


def unlinked(engine: SearchEngine, lab: LabConfig) -> list[Unlinked]:
    """The declared members no paper was anchored on, with why (for the admin page)."""
    if not lab.members:
        return []
    with engine.data.store.reading() as db:
        return unlinked_members(db, lab)


def home_section(engine: SearchEngine, config: Config) -> LabSection | None:
    """The section of the configured lab (None when ``[lab]`` is empty)."""
    return lab_section(engine, config.lab, HOME_PAPERS, config.search.max_query_length)
