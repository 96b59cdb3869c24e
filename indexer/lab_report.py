"""Why a declared lab member has no papers: :mod:`indexer.lab`'s anchoring rules told back
to the admin (``papersift doctor`` and the admin page), with the spellings the store holds.

Anchoring stays as conservative as identities are: a name of initials only ("R.
Pandharipande") anchors a paper only with evidence, since many people may write it so.
When that leaves a member without papers, the admin is told what the papers carry and what
would anchor them (the name spelled out as some papers write it, ``[lab] ror`` with
enrichment), instead of reading "0 papers".
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass

from papersift.core.config import LabConfig
from papersift.core.names import compatible, split_name
from papersift.core.setting_parsers import LabMember
from papersift.engine.author_query import name_key
from papersift.engine.people import PEOPLE_SEQ
from papersift.indexer.lab import META_FINGERPRINT, fingerprint

SHOWN = 3  # spellings named in a reason
REFRESH = "run `papersift index` (or let `papersift serve` refresh researcher identities)"


@dataclass(frozen=True, slots=True)
class Unlinked:
    """A declared member no researcher carries the ORCID of: why, and what to do."""

    name: str
    orcid: str
    reason: str
    fix: str


def unlinked_members(db: sqlite3.Connection, lab: LabConfig) -> list[Unlinked]:
    """The declared members without a paper anchored, each with the reason (read only)."""
    if not lab.members:
        return []
    try:
        linked = {str(v) for (v,) in db.execute(_LINKED)}
        pending = _pending(db, lab)
    except sqlite3.OperationalError:  # no researcher tables yet: never refreshed
        linked, pending = set(), "researcher identities have not been computed yet"
    out = []
    for m in lab.members:
        if m.orcid in linked:
            continue
        if pending:
            out.append(Unlinked(m.name, m.orcid, pending, REFRESH))
        else:
            out.append(Unlinked(m.name, m.orcid, *_why(db, lab, m)))
    return out


_LINKED = (
    "SELECT i.value FROM researcher_ids i JOIN researchers r ON r.rid = i.rid "
    "WHERE i.source = 'orcid' AND r.merged_into IS NULL AND r.papers > 0"
)


def _meta(db: sqlite3.Connection, key: str) -> str | None:
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def _pending(db: sqlite3.Connection, lab: LabConfig) -> str:
    """Why the researcher tables may not show the declaration yet ("" when they do)."""
    if _meta(db, META_FINGERPRINT) != fingerprint(lab):
        return "the [lab] declaration changed since researcher identities were last refreshed"
    if int(_meta(db, PEOPLE_SEQ) or 0) < int(_meta(db, "seq") or 0):
        return "papers changed since researcher identities were last refreshed"
    return ""


def _why(db: sqlite3.Connection, lab: LabConfig, m: LabMember) -> tuple[str, str]:
    """(reason, fix) for a member nothing is anchored on, from the spellings of its block."""
    key = name_key(m.name)
    me = split_name(key)
    if not me.given or me.collective:
        return (
            "a surname alone anchors nothing",
            "declare the name with its given names or initials, as the papers write it",
        )
    papers: Counter[str] = Counter()
    shown: dict[str, str] = {}
    for k, name, n in db.execute(
        "SELECT key, name, COUNT(DISTINCT docid) FROM authorships WHERE block = ? "
        "GROUP BY key, name ORDER BY 3 DESC",
        (me.block,),
    ):
        if compatible(split_name(str(k)), me):
            papers[str(k)] += int(n)
            shown.setdefault(str(k), str(name))
    if not papers:
        return (
            f"no paper in the store has an author named {m.name!r} or a compatible spelling",
            "check the declared spelling, or import the member's papers",
        )
    listed = ", ".join(f"{shown[k]!r} ({_papers(n)})" for k, n in papers.most_common(SHOWN))
    evidence = (
        "the lab's ROR id among its affiliations, or another declared member among its authors"
    )
    spelled = [k for k, _ in papers.most_common() if split_name(k).full and k != key]
    fixes = [
        f"declare the name as papers spell it out ({shown[k]!r}, {_papers(papers[k])}): "
        "those anchor by name"
        for k in spelled[:1]
    ]
    fixes.append(
        "run `papersift enrich` so that papers carry affiliations"
        if lab.ror
        else "set [lab] ror and run `papersift enrich`"
    )
    fixes.append("declare the co-authors who are members")
    fix = "; or ".join(fixes)
    if key in papers and me.full:
        return (
            f"{_papers(papers[key])} carry exactly this name, but on each another declared "
            "member's name fits too, two of its authors fit, or the author has another ORCID",
            "make the declared names tell the members apart (middle initials, full given names)",
        )
    if not me.full:
        return (
            f"papers name {listed}, but a name of initials only anchors a paper only with "
            f"evidence ({evidence}) and none of these has it",
            fix,
        )
    return (
        f"no paper spells the name as declared; {listed} anchor only with evidence ({evidence})"
        " and none of these has it",
        fix,
    )


def _papers(n: int) -> str:
    return f"{n} paper" if n == 1 else f"{n} papers"
