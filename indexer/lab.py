"""The declared lab's members anchored on their authorships: ``[lab] members`` ORCIDs.

:func:`anchor_ids` is pure: given the lab and a paper, the extra ``("orcid", ...)`` id of
each authorship that is a declared member. ``indexer.identity`` adds them where it encodes
an authorship's ids, so identity rule 1 (a shared ORCID joins, different ones split) puts
every anchored spelling in the member's researcher. Conservative, as identities are: an
authorship is a member only when

- its name is compatible with the member's (``papersift.core.names``: same surname, compatible
  given names) and with no other member's, and no other author of the paper is compatible
  with that member;
- it carries no ORCID of its own that differs from the member's;
- and there is evidence: the same spelled-out normalised name, or the lab's institution
  (ROR id) among the paper's affiliations, or another declared member among the authors
  (papers with at most ``MAX_EVIDENCE_AUTHORS`` authors).

:func:`lab_changes` makes a changed declaration take effect on the next identity refresh:
the store keeps a fingerprint of the declaration and the name blocks it touched, and the
papers of the old and new blocks are re-read when it changes.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from dataclasses import dataclass
from functools import lru_cache

from papersift.core.config import LabConfig
from papersift.core.names import NameParts, compatible, split_name
from papersift.core.paper import Paper
from papersift.engine.author_query import name_key
from papersift.engine.institutions import affiliation_rors
from papersift.engine.people import MAX_EVIDENCE_AUTHORS
from papersift.engine.sql_batches import in_batches
from papersift.engine.store import PaperStore

RULES_VERSION = 1  # bump when the anchoring rules change: the next refresh re-reads
META_FINGERPRINT = "lab_fingerprint"
META_BLOCKS = "lab_blocks"


@dataclass(frozen=True, slots=True)
class _Member:
    orcid: str
    key: str
    parts: NameParts


@lru_cache(maxsize=8)
def _members(lab: LabConfig) -> tuple[_Member, ...]:
    out = []
    for m in lab.members:
        key = name_key(m.name)
        parts = split_name(key)
        if parts.given and not parts.collective:  # a surname alone anchors nothing
            out.append(_Member(m.orcid, key, parts))
    return tuple(out)


def anchor_ids(lab: LabConfig, paper: Paper) -> dict[int, tuple[tuple[str, str], ...]]:
    """Author position -> the ids to add to that authorship (the member's ORCID)."""
    members = _members(lab)
    if not members:
        return {}
    candidates: dict[int, list[int]] = {}
    for pos, author in enumerate(paper.authors):
        parts = split_name(author.key)
        if parts.collective or not parts.given:
            continue
        found = [i for i, m in enumerate(members) if compatible(parts, m.parts)]
        if found:
            candidates[pos] = found
    claims: dict[int, int] = {}
    for found in candidates.values():
        for i in found:
            claims[i] = claims.get(i, 0) + 1
    # One member, one position: an ambiguous name on either side anchors nothing.
    pairs = {
        pos: found[0]
        for pos, found in candidates.items()
        if len(found) == 1 and claims[found[0]] == 1
    }
    if not pairs:
        return {}
    at_lab = bool(lab.ror) and lab.ror in affiliation_rors(paper)
    small = len(paper.authors) <= MAX_EVIDENCE_AUTHORS
    out: dict[int, tuple[tuple[str, str], ...]] = {}
    for pos, i in pairs.items():
        member, author = members[i], paper.authors[pos]
        orcids = {v for s, v in author.ids if s == "orcid"}
        if orcids and orcids != {member.orcid}:
            continue  # a different ORCID: another person of a compatible name
        exact = author.key == member.key and member.parts.full
        with_member = small and len(pairs) > 1
        if (exact or at_lab or with_member) and member.orcid not in orcids:
            out[pos] = (("orcid", member.orcid),)
    return out


def fingerprint(lab: LabConfig) -> str:
    """Changes when anything anchoring depends on changes (not the lab's display name)."""
    state = [RULES_VERSION, lab.ror, sorted((name_key(m.name), m.orcid) for m in lab.members)]
    return hashlib.blake2b(json.dumps(state).encode(), digest_size=12).hexdigest()


def member_blocks(lab: LabConfig) -> list[str]:
    """The name blocks a member's authorships can be in (compatible names share a block)."""
    return sorted({m.parts.block for m in _members(lab)})


def lab_changes(
    db: sqlite3.Connection, store: PaperStore, lab: LabConfig, skip: set[int]
) -> list[tuple[int, Paper]]:
    """Inside the identity refresh's transaction: the papers to re-read because the lab
    declaration changed since the last refresh (none if it did not), recording the new one.
    ``skip``: docids the refresh re-reads anyway."""
    now = fingerprint(lab)
    row = db.execute("SELECT value FROM meta WHERE key = ?", (META_FINGERPRINT,)).fetchone()
    if row is not None and str(row[0]) == now:
        return []
    if row is None and not lab.members:
        return []  # never declared: nothing was anchored
    old = db.execute("SELECT value FROM meta WHERE key = ?", (META_BLOCKS,)).fetchone()
    blocks = sorted(set(json.loads(str(old[0])) if old else []) | set(member_blocks(lab)))
    docids: set[int] = set()
    for marks, chunk in in_batches(blocks):
        query = f"SELECT DISTINCT docid FROM authorships WHERE block IN ({marks})"
        docids.update(int(d) for (d,) in db.execute(query, chunk))
    db.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
        [(META_FINGERPRINT, now), (META_BLOCKS, json.dumps(member_blocks(lab)))],
    )
    wanted = sorted(docids - skip)
    papers = store.get(wanted)
    return [(d, papers[d]) for d in wanted if d in papers]


def lab_pending(store: PaperStore, lab: LabConfig) -> bool:
    """Whether the declaration changed since the last identity refresh recorded it."""
    recorded = store.get_meta(META_FINGERPRINT)
    if recorded is None:
        return bool(lab.members)
    return recorded != fingerprint(lab)
