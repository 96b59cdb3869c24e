"""Researcher identity: cluster the papers' authorships into researchers with stable ids.

Rules, strongest first (all inside one block: same surname, same first initial):

1. Equal external ids (ORCID, OpenAlex, Semantic Scholar) join; different values of one
   source never join.
2. The same normalised name with a spelled-out first name joins ("Balázs Kégl" = "Balazs
   Kegl" = "B\\'alazs K\\'egl").
3. Different but compatible spellings ("J. Smith", "John A. Smith", "Guenther"/"Günther")
   join only with evidence, a shared co-author (surname and initial) or a shared id, and
   only when exactly one candidate qualifies. Initials-only names need that evidence even
   when spelled identically.
4. Two authors of one paper are never joined.

Ids are stable: each new cluster keeps the id most of its authorships had before; a
cluster that lost its id to a merge leaves a redirect (``merged_into``). Only blocks
touched by papers changed since the last run are recomputed.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from engine.institutions import SCHEMA as INSTITUTION_SCHEMA
from engine.institutions import affiliations
from engine.names import NameParts, compatible, specificity, split_name
from engine.people import MAX_EVIDENCE_AUTHORS, encode_ids, ensure_schema
from engine.store import PaperStore
from papersift.paper import Paper

META_SEQ = "people_seq"
MAX_ROUNDS = 6


@dataclass(frozen=True, slots=True)
class IdentityReport:
    papers: int = 0  # papers (re)read
    blocks: int = 0  # name blocks recomputed
    touched: int = 0  # papers whose researcher ids changed


@dataclass(slots=True)
class _Row:
    docid: int
    position: int
    n_authors: int
    name: str
    key: str
    ids: frozenset[tuple[str, str]]
    old_rid: int | None


@dataclass(slots=True)
class _Unit:
    rows: list[_Row]
    parts: dict[str, NameParts]  # distinct keys
    ids: dict[str, set[str]] = field(default_factory=dict)
    docids: set[int] = field(default_factory=set)
    coauthors: set[str] = field(default_factory=set)

    def absorb(self, other: _Unit) -> None:
        self.rows += other.rows
        self.parts.update(other.parts)
        for s, vs in other.ids.items():
            self.ids.setdefault(s, set()).update(vs)
        self.docids |= other.docids
        self.coauthors |= other.coauthors

    def conflicts(self, other: _Unit) -> bool:
        if self.docids & other.docids:
            return True
        return any(s in other.ids and vs != other.ids[s] for s, vs in self.ids.items())

    def compatible(self, other: _Unit) -> bool:
        return all(compatible(a, b) for a in self.parts.values() for b in other.parts.values())

    def full(self) -> bool:
        return any(p.full for p in self.parts.values())


def refresh_identities(store: PaperStore) -> IdentityReport:
    """Bring the researcher tables up to date with the papers; touch papers whose ids moved."""
    with store.reading() as db:
        ensure_schema(db)
        db.executescript(INSTITUTION_SCHEMA)  # the affiliations table, refreshed below
    if int(store.get_meta(META_SEQ) or 0) >= store.seq:
        return IdentityReport()
    with store.transaction() as db:  # read the changes inside it: none can slip in between
        done = int(store.get_meta(META_SEQ) or 0)
        changed = [(d, p) for batch in store.changed_since(done) for d, p, _ in batch]
        dead = [d for d, _ in store.tombstones_since(done)]
        docids = [d for d, _ in changed] + dead
        old: dict[tuple[int, str], int] = {}
        blocks: set[str] = set()
        for i in range(0, len(docids), 500):
            chunk = docids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for d, key, block, rid in db.execute(
                f"SELECT docid, key, block, rid FROM authorships WHERE docid IN ({marks})", chunk
            ):
                blocks.add(str(block))
                if rid is not None:
                    old[(int(d), str(key))] = int(rid)
            db.execute(f"DELETE FROM authorships WHERE docid IN ({marks})", chunk)
        for docid, paper in changed:
            n = len(paper.authors)
            for pos, a in enumerate(paper.authors):
                block = split_name(a.key).block
                blocks.add(block)
                db.execute(
                    "INSERT INTO authorships (docid, position, n_authors, name, key, block, ids, "
                    "rid) VALUES (?,?,?,?,?,?,?,?)",
                    (
                        docid,
                        pos,
                        n,
                        a.name,
                        a.key,
                        block,
                        encode_ids(a.ids),
                        old.get((docid, a.key)),
                    ),
                )
        _refresh_affiliations(db, changed, dead)
        touched: set[int] = {d for d, _ in changed}
        for block in sorted(blocks):
            touched |= _recluster(db, block)
        touched -= set(dead)
        seq = store.touch(sorted(touched))
        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (META_SEQ, str(seq)))
    return IdentityReport(len(changed), len(blocks), len(touched))


def _refresh_affiliations(
    db: sqlite3.Connection, changed: list[tuple[int, Paper]], dead: list[int]
) -> None:
    """The (paper, author position, ROR id) rows follow the papers' enrichment records."""
    for i in range(0, len(changed) + len(dead), 500):
        chunk = ([d for d, _ in changed] + dead)[i : i + 500]
        db.execute(
            f"DELETE FROM affiliations WHERE docid IN ({','.join('?' * len(chunk))})", chunk
        )
    db.executemany(
        "INSERT OR IGNORE INTO affiliations (docid, position, ror_id) VALUES (?, ?, ?)",
        [(d, pos, ror) for d, p in changed for pos, ror, _ in affiliations(p)],
    )


def _load(db: sqlite3.Connection, block: str) -> tuple[list[_Row], dict[int, set[str]]]:
    rows = [
        _Row(int(d), int(p), int(n), str(name), str(key), frozenset(map(tuple, json.loads(ids))), r)
        for d, p, n, name, key, ids, r in db.execute(
            "SELECT docid, position, n_authors, name, key, ids, rid FROM authorships "
            "WHERE block = ? ORDER BY docid, position",
            (block,),
        )
    ]
    small = sorted({r.docid for r in rows if r.n_authors <= MAX_EVIDENCE_AUTHORS})
    coauthors: dict[int, set[str]] = defaultdict(set)
    for i in range(0, len(small), 500):
        chunk = small[i : i + 500]
        marks = ",".join("?" * len(chunk))
        for d, b in db.execute(
            f"SELECT docid, block FROM authorships WHERE docid IN ({marks}) AND block != ?",
            (*chunk, block),
        ):
            coauthors[int(d)].add(str(b))
    return rows, coauthors


def cluster(rows: list[_Row], coauthors: dict[int, set[str]]) -> list[_Unit]:
    """The researchers of one block (rules 1-4 of the module docstring)."""
    units: list[_Unit] = []
    by_id: dict[tuple[str, str], _Unit] = {}
    by_key: dict[str, list[_Unit]] = defaultdict(list)
    for r in rows:
        parts = split_name(r.key)
        unit = _Unit([r], {r.key: parts}, {}, {r.docid}, set(coauthors.get(r.docid, ())))
        for s, v in r.ids:
            unit.ids.setdefault(s, set()).add(v)
        home = next((by_id[i] for i in r.ids if i in by_id), None)
        if home is None and (parts.full or parts.collective):
            same = [u for u in by_key[r.key] if not u.conflicts(unit)]
            # Two units of one name exist when it is on one paper twice; join the larger.
            # If two of them carry ids (two ORCIDs, one name), the row is ambiguous.
            if sum(bool(u.ids) for u in same) <= 1 and same:
                home = max(same, key=lambda u: len(u.docids))
        if home is not None and not home.conflicts(unit):
            home.absorb(unit)
            unit = home
        else:
            units.append(unit)
            by_key[r.key].append(unit)
        for i in r.ids:
            by_id.setdefault(i, unit)
    for _ in range(MAX_ROUNDS):
        if not _attach_round(units):
            break
    return units


def _attach_round(units: list[_Unit]) -> bool:
    """Join each unit to its one compatible, evidenced candidate; True if anything joined."""
    merged = False
    order = sorted(units, key=lambda u: (u.full(), min(specificity(p) for p in u.parts.values())))
    # Evidence index: co-author block or external id -> units that have it. Units absorbed
    # during the round are followed to their new home.
    having: dict[object, list[_Unit]] = defaultdict(list)
    for v in units:
        for c in v.coauthors:
            having[c].append(v)
        for src, values in v.ids.items():
            for value in values:
                having[(src, value)].append(v)
    home: dict[int, _Unit] = {}

    def resolve(v: _Unit) -> _Unit:
        while id(v) in home:
            v = home[id(v)]
        return v

    for u in order:
        if id(u) in home:
            continue
        evidence = [*u.coauthors, *((s, x) for s, vs in u.ids.items() for x in vs)]
        seen: dict[int, _Unit] = {}
        for e in evidence:
            for v in having.get(e, ()):
                v = resolve(v)
                if v is not u:
                    seen[id(v)] = v
        cands = [v for v in seen.values() if not u.conflicts(v) and u.compatible(v)]
        if len(cands) == 1:
            cands[0].absorb(u)
            home[id(u)] = cands[0]
            merged = True
    units[:] = [u for u in units if id(u) not in home]
    return merged


def _shared_id(u: _Unit, v: _Unit) -> bool:
    return any(s in v.ids and vs & v.ids[s] for s, vs in u.ids.items())


def _recluster(db: sqlite3.Connection, block: str) -> set[int]:
    """Recompute one block and persist it; returns docids whose researcher ids changed."""
    rows, coauthors = _load(db, block)
    units = sorted(cluster(rows, coauthors), key=lambda u: (-len(u.docids), u.rows[0].docid))
    before = {
        int(r)
        for (r,) in db.execute(
            "SELECT rid FROM researchers WHERE block = ? AND merged_into IS NULL AND papers > 0",
            (block,),
        )
    }
    before |= {r.old_rid for r in rows if r.old_rid is not None}
    taken: dict[int, _Unit] = {}
    assigned: list[tuple[_Unit, int]] = []
    for u in units:
        votes = Counter(r.old_rid for r in u.rows if r.old_rid is not None)
        for rid in taken:
            votes.pop(rid, None)
        rid = min(votes, key=lambda k: (-votes[k], k)) if votes else _new_rid(db, u, block)
        taken[rid] = u
        assigned.append((u, rid))
    touched: set[int] = set()
    for u, rid in assigned:
        name, key = _display(u)
        db.execute(
            "UPDATE researchers SET name = ?, key = ?, block = ?, papers = ?, collective = ?, "
            "merged_into = NULL WHERE rid = ?",
            (name, key, block, len(u.docids), int(split_name(key).collective), rid),
        )
        if rid in before:
            db.execute("DELETE FROM researcher_ids WHERE rid = ?", (rid,))
        if u.ids:
            db.executemany(
                "INSERT OR IGNORE INTO researcher_ids (source, value, rid) VALUES (?, ?, ?)",
                [(s, v, rid) for s, vs in u.ids.items() for v in vs],
            )
        moved = [(rid, r.docid, r.position) for r in u.rows if r.old_rid != rid]
        touched.update(d for _, d, _ in moved)
        db.executemany("UPDATE authorships SET rid = ? WHERE docid = ? AND position = ?", moved)
    for gone in before - taken.keys():
        # Its authorships went elsewhere (a merge: redirect) or their papers were deleted.
        heirs = Counter(rid for u, rid in assigned for r in u.rows if r.old_rid == gone)
        heir = heirs.most_common(1)[0][0] if heirs else None
        db.execute("UPDATE researchers SET papers = 0, merged_into = ? WHERE rid = ?", (heir, gone))
        db.execute("DELETE FROM researcher_ids WHERE rid = ?", (gone,))
    return touched


def _new_rid(db: sqlite3.Connection, u: _Unit, block: str) -> int:
    name, key = _display(u)
    cur = db.execute(
        "INSERT INTO researchers (name, key, block) VALUES (?, ?, ?)", (name, key, block)
    )
    assert cur.lastrowid is not None
    return int(cur.lastrowid)


def _display(u: _Unit) -> tuple[str, str]:
    """The most specific spelling, and among its forms the most used (accents preferred)."""
    key = min(u.parts, key=lambda k: (specificity(u.parts[k]), k))
    forms = Counter(r.name for r in u.rows if r.key == key)
    name = max(forms, key=lambda n: (forms[n], not n.isascii(), n))
    return name, key
