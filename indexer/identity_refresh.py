"""Keeping the researcher tables in step with the papers, incrementally and in bulk.

One run reads the papers changed since the last (``people_seq``), rewrites their
authorship rows, re-clusters every name block they touch (:func:`indexer.identity.cluster`)
and writes the result with a few statements per few hundred blocks. Papers of the current
run come from memory when the caller has them (an import), so a bulk import neither
decodes its papers again nor writes an authorship row twice.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tqdm import tqdm

from papersift.core.config import LabConfig
from papersift.core.names import split_name
from papersift.core.paper import Paper
from papersift.engine.datadir import DataDir
from papersift.engine.institutions import SCHEMA as INSTITUTION_SCHEMA
from papersift.engine.institutions import affiliations
from papersift.engine.people import (
    ID_SOURCES,
    MAX_EVIDENCE_AUTHORS,
    PEOPLE_SEQ,
    encode_ids,
    ensure_schema,
)
from papersift.engine.people_names import NAMES_SEQ, fill_names, write_names
from papersift.engine.researcher_order import PEOPLE_VERSION
from papersift.engine.sql_batches import in_batches
from papersift.engine.store import PaperStore
from papersift.indexer.identity import Row, Unit, cluster, common_names, display
from papersift.indexer.lab import anchor_ids, lab_changes, lab_pending

PEOPLE_SLICE = 100_000  # papers per transaction of refresh_people
# The rules of ``indexer.identity`` the researcher tables were clustered by. A change of
# them re-reads every paper's authors once (the next run, resumable as any backlog), so an
# upgrade mends the identities already there, not only those of papers changed after it:
# 2 joins the candidates of one unit where the block shows one person (session 34); 3 joins
# a common name's papers only on two co-authors' names, keeps a hyphenated first name whole,
# reads "Juergen" as "Jürgen", joins two or more identical initials in a rare block and
# labels a researcher by the spelling most of its papers use (review 35).
IDENTITY_RULES = "3"
RULES_KEY = "people_rules"

_NO_IDS: frozenset[tuple[str, str]] = frozenset()


def rules_current(store: PaperStore) -> None:
    """Record ``IDENTITY_RULES``; tables clustered by other rules are re-read from the first
    paper (their ids stay stable: each new cluster keeps most of its authorships' id)."""
    if store.get_meta(RULES_KEY) == IDENTITY_RULES:
        return
    clustered = (store.get_meta(PEOPLE_SEQ) or "0") != "0"
    with store.transaction() as db:
        marks = [(RULES_KEY, IDENTITY_RULES)]
        marks += [(PEOPLE_SEQ, "0"), (NAMES_SEQ, "0")] if clustered else []
        db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", marks)


@dataclass(frozen=True, slots=True)
class IdentityReport:
    papers: int = 0  # papers (re)read
    blocks: int = 0  # name blocks recomputed
    touched: int = 0  # papers whose researcher ids changed

    def __add__(self, other: IdentityReport) -> IdentityReport:
        return IdentityReport(
            self.papers + other.papers, self.blocks + other.blocks, self.touched + other.touched
        )


def refresh_identities(
    store: PaperStore,
    known: Mapping[int, Paper] | None = None,
    lab: LabConfig | None = None,
    *,
    limit: int | None = None,
) -> IdentityReport:
    """Bring the researcher tables up to date with the papers changed since the last run,
    at most ``limit`` of them (the oldest changes first) in one transaction.

    ``known`` may hold current (docid -> paper) records of changed papers, saving the
    decoding. Nothing else is rewritten: search reads researcher ids from these tables.
    ``lab``: the declared members' ORCIDs are anchored on their authorships
    (``indexer.lab``); when the declaration changed, the papers of its name blocks are
    re-read.
    """
    with store.reading() as db:
        ensure_schema(db)
        db.executescript(INSTITUTION_SCHEMA)  # the affiliations table, refreshed below
    rules_current(store)
    fill_names(store, PEOPLE_SEQ)  # the directory's name words, rewritten below as well
    if int(store.get_meta(PEOPLE_SEQ) or 0) >= store.seq and not (lab and lab_pending(store, lab)):
        return IdentityReport()
    known = known or {}
    with store.transaction() as db:  # read the changes inside it: none can slip in between
        done = int(store.get_meta(PEOPLE_SEQ) or 0)
        upto = store.seq
        rows = store.changes_after(done, limit)
        if limit is not None and len(rows) == limit:
            upto = rows[-1][1]  # the slice ends at its last paper's change
        docids = [d for d, _ in rows]
        decoded = store.get([d for d in docids if d not in known])
        changed = [(d, known[d] if d in known else decoded[d]) for d in docids]
        dead = [d for d, s in store.tombstones_since(done) if s <= upto]
        if lab is not None:
            changed += lab_changes(db, store, lab, {d for d, _ in changed} | set(dead))
        new_rows, blocks = _new_rows(db, changed, dead, lab)
        _refresh_affiliations(db, changed, dead)
        touched: set[int] = {d for d, _ in changed}
        touched |= _recluster_blocks(db, sorted(blocks), new_rows)
        touched -= set(dead)
        db.executemany(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
            [(PEOPLE_SEQ, str(upto)), (NAMES_SEQ, str(upto))],
        )
        # The directory's order is read again (engine.researcher_order): a refresh for a
        # changed lab declaration leaves the sequence number where it was.
        db.execute(
            "INSERT INTO meta (key, value) VALUES (?, '1') ON CONFLICT(key) DO UPDATE "
            "SET value = CAST(value AS INTEGER) + 1",
            (PEOPLE_VERSION,),
        )
    return IdentityReport(len(changed), len(blocks), len(touched))


def _new_rows(
    db: sqlite3.Connection,
    changed: list[tuple[int, Paper]],
    dead: list[int],
    lab: LabConfig | None = None,
) -> tuple[dict[str, list[Row]], set[str]]:
    """Drop the authorship rows of changed and deleted papers and build the changed
    papers' new rows in memory (by block). Each keeps its author's previous researcher id
    as a vote for stability. Returns the rows and every block to recompute."""
    old: dict[tuple[int, str], int] = {}
    blocks: set[str] = set()
    for marks, chunk in in_batches([d for d, _ in changed] + dead):
        for d, key, block, rid in db.execute(
            f"SELECT docid, key, block, rid FROM authorships WHERE docid IN ({marks})",
            chunk,
        ):
            blocks.add(str(block))
            if rid is not None:
                old[(int(d), str(key))] = int(rid)
        db.execute(f"DELETE FROM authorships WHERE docid IN ({marks})", chunk)
    rows: dict[str, list[Row]] = defaultdict(list)
    for docid, paper in changed:
        n = len(paper.authors)
        anchored = anchor_ids(lab, paper) if lab is not None else {}
        for pos, a in enumerate(paper.authors):
            own = (*a.ids, *anchored[pos]) if pos in anchored else a.ids
            ids = frozenset(i for i in own if i[0] in ID_SOURCES) if own else _NO_IDS
            row = Row(docid, pos, n, a.name, a.key, ids, old.get((docid, a.key)), new=True)
            rows[split_name(a.key).block].append(row)
    blocks.update(rows)
    return rows, blocks


def _refresh_affiliations(
    db: sqlite3.Connection, changed: list[tuple[int, Paper]], dead: list[int]
) -> None:
    """The (paper, author position, ROR id) rows follow the papers' enrichment records."""
    for marks, chunk in in_batches([d for d, _ in changed] + dead):
        db.execute(f"DELETE FROM affiliations WHERE docid IN ({marks})", chunk)
    db.executemany(
        "INSERT OR IGNORE INTO affiliations (docid, position, ror_id) VALUES (?, ?, ?)",
        [(d, pos, ror) for d, p in changed for pos, ror, _ in affiliations(p)],
    )


@dataclass(slots=True)
class _Writes:
    """Row changes of a group of recomputed blocks, written with one statement each."""

    researchers: list[tuple[object, ...]] = field(default_factory=list)
    ids: list[tuple[str, str, int]] = field(default_factory=list)
    inserted: list[tuple[object, ...]] = field(default_factory=list)
    moved: list[tuple[int, int, int]] = field(default_factory=list)
    gone: list[tuple[int | None, int]] = field(default_factory=list)
    before: set[int] = field(default_factory=set)
    names: dict[int, set[str]] = field(default_factory=dict)  # rid -> its authorships' keys

    def apply(self, db: sqlite3.Connection) -> None:
        for marks, chunk in in_batches(sorted(self.before)):
            db.execute(f"DELETE FROM researcher_ids WHERE rid IN ({marks})", chunk)
        db.executemany(
            "INSERT INTO researchers (rid, name, key, block, papers, collective, merged_into) "
            "VALUES (?,?,?,?,?,?,NULL) ON CONFLICT (rid) DO UPDATE SET name = excluded.name, "
            "key = excluded.key, block = excluded.block, papers = excluded.papers, "
            "collective = excluded.collective, merged_into = NULL",
            self.researchers,
        )
        db.executemany(
            "INSERT OR IGNORE INTO researcher_ids (source, value, rid) VALUES (?, ?, ?)", self.ids
        )
        db.executemany(
            "INSERT INTO authorships (docid, position, n_authors, name, key, block, ids, rid) "
            "VALUES (?,?,?,?,?,?,?,?)",
            self.inserted,
        )
        db.executemany(
            "UPDATE authorships SET rid = ? WHERE docid = ? AND position = ?", self.moved
        )
        db.executemany(
            "UPDATE researchers SET papers = 0, merged_into = ? WHERE rid = ?", self.gone
        )
        write_names(db, self.names, self.before)


def _recluster_blocks(
    db: sqlite3.Connection, blocks: list[str], new_rows: dict[str, list[Row]]
) -> set[int]:
    """Recompute these blocks from their stored rows plus the new ones and persist them,
    a few hundred blocks per round trip; returns the docids whose researcher ids changed."""
    touched: set[int] = set()
    next_rid = _next_rid(db)
    new_blocks: dict[int, set[str]] = defaultdict(set)  # blocks of the changed papers
    new_keys: dict[int, set[str]] = defaultdict(set)  # and their names
    for block, rows in new_rows.items():
        for r in rows:
            new_blocks[r.docid].add(block)
            new_keys[r.docid].add(r.key)
    for marks, chunk in in_batches(blocks):
        rows_of: dict[str, list[Row]] = defaultdict(list)
        for d, p, n, name, key, ids, r, block in db.execute(
            "SELECT docid, position, n_authors, name, key, ids, rid, block FROM authorships "
            f"WHERE block IN ({marks})",
            chunk,
        ):
            ident = _NO_IDS if ids == "[]" else frozenset(map(tuple, json.loads(ids)))
            rows_of[block].append(Row(d, p, n, name, key, ident, r))
        small = {
            r.docid
            for rows in rows_of.values()
            for r in rows
            if r.n_authors <= MAX_EVIDENCE_AUTHORS
        }
        blocks_of = _blocks_of_papers(db, sorted(small - new_blocks.keys()))
        before_of: dict[str, set[int]] = defaultdict(set)
        for rid, block in db.execute(
            f"SELECT rid, block FROM researchers WHERE block IN ({marks}) "
            "AND merged_into IS NULL AND papers > 0",
            chunk,
        ):
            before_of[block].add(int(rid))
        writes = _Writes()
        for block in chunk:
            rows = rows_of.get(block, []) + new_rows.get(block, [])
            if len(rows) == 1 and rows[0].old_rid is None and not before_of.get(block):
                next_rid = _plan_single(block, rows[0], next_rid, writes, touched)
                continue
            rows.sort(key=lambda r: (r.docid, r.position))
            coauthors: dict[int, set[str]] = {}
            for r in rows:
                if r.n_authors <= MAX_EVIDENCE_AUTHORS and r.docid not in coauthors:
                    mine = new_blocks.get(r.docid) or blocks_of.get(r.docid, set())
                    coauthors[r.docid] = mine - {block}
            before = before_of.get(block, set()) | {
                r.old_rid for r in rows if r.old_rid is not None
            }
            names = _names_for_common(db, rows, new_keys)
            next_rid = _plan_block(block, rows, coauthors, before, next_rid, writes, touched, names)
        writes.apply(db)
    return touched


def _plan_single(block: str, r: Row, next_rid: int, writes: _Writes, touched: set[int]) -> int:
    """A block of one authorship that had no researcher (most blocks of a big import): one
    researcher with a new id, as ``_plan_block`` would make it, without clustering."""
    rid = next_rid
    writes.researchers.append((rid, r.name, r.key, block, 1, int(split_name(r.key).collective)))
    writes.ids += [(s, v, rid) for s, v in r.ids]
    writes.names[rid] = {r.key}
    if r.new:
        writes.inserted.append(
            (r.docid, r.position, r.n_authors, r.name, r.key, block, _encode(r.ids), rid)
        )
    else:
        writes.moved.append((rid, r.docid, r.position))
    touched.add(r.docid)
    return next_rid + 1


def _names_for_common(
    db: sqlite3.Connection, rows: list[Row], new_keys: dict[int, set[str]]
) -> dict[int, set[str]] | None:
    """The author names (keys) of the papers of the block's common names, their evidence
    (``indexer.identity``, rule 2), or None when it has none; changed papers' from memory."""
    common = common_names(rows)
    if not common:
        return None
    docids = {r.docid for r in rows if r.key in common and r.n_authors <= MAX_EVIDENCE_AUTHORS}
    out: dict[int, set[str]] = {d: new_keys[d] for d in docids if d in new_keys}
    for marks, chunk in in_batches(sorted(docids - out.keys())):
        for d, k in db.execute(
            f"SELECT docid, key FROM authorships WHERE docid IN ({marks})", chunk
        ):
            out.setdefault(int(d), set()).add(str(k))
    return out


def _blocks_of_papers(db: sqlite3.Connection, docids: Sequence[int]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = defaultdict(set)
    for marks, chunk in in_batches(docids):
        for d, b in db.execute(
            f"SELECT docid, block FROM authorships WHERE docid IN ({marks})", chunk
        ):
            out[int(d)].add(str(b))
    return out


def _encode(ids: frozenset[tuple[str, str]]) -> str:
    return encode_ids(ids) if ids else "[]"


def _next_rid(db: sqlite3.Connection) -> int:
    """The next researcher id: AUTOINCREMENT never reuses one, so neither do we."""
    row = db.execute("SELECT seq FROM sqlite_sequence WHERE name = 'researchers'").fetchone()
    top = db.execute("SELECT max(rid) FROM researchers").fetchone()[0]
    return max(int(row[0]) if row else 0, int(top or 0)) + 1


def _plan_block(
    block: str,
    rows: list[Row],
    coauthors: dict[int, set[str]],
    before: set[int],
    next_rid: int,
    writes: _Writes,
    touched: set[int],
    names: dict[int, set[str]] | None = None,
) -> int:
    """Cluster one block and queue its row changes; returns the next free researcher id.
    ``names``: the papers' author names where the block has common names (rule 2).

    Each cluster keeps the id most of its authorships had (ties: the smaller id); a cluster
    without one gets a new id. An id no cluster kept is redirected to the cluster that took
    most of its authorships (a merge), or retired when its papers are gone."""
    units = sorted(cluster(rows, coauthors, names), key=lambda u: (-len(u.docids), u.rows[0].docid))
    taken: set[int] = set()
    assigned: list[tuple[Unit, int]] = []
    for u in units:
        votes = Counter(
            r.old_rid for r in u.rows if r.old_rid is not None and r.old_rid not in taken
        )
        if votes:
            rid = min(votes, key=lambda k: (-votes[k], k))
        else:
            rid, next_rid = next_rid, next_rid + 1
        taken.add(rid)
        assigned.append((u, rid))
    writes.before |= before
    for u, rid in assigned:
        name, key = display(u)
        writes.researchers.append(
            (rid, name, key, block, len(u.docids), int(split_name(key).collective))
        )
        writes.ids += [(s, v, rid) for s, vs in u.ids.items() for v in vs]
        writes.names[rid] = {r.key for r in u.rows}  # a block holds all of a researcher's rows
        for r in u.rows:
            if r.new:
                writes.inserted.append(
                    (r.docid, r.position, r.n_authors, r.name, r.key, block, _encode(r.ids), rid)
                )
            elif r.old_rid != rid:
                writes.moved.append((rid, r.docid, r.position))
            if r.old_rid != rid:
                touched.add(r.docid)
    for gone in sorted(before - taken):
        heirs = Counter(rid for u, rid in assigned for r in u.rows if r.old_rid == gone)
        writes.gone.append((heirs.most_common(1)[0][0] if heirs else None, gone))
    return next_rid


def refresh_people(
    data: DataDir, known: Mapping[int, Paper] | None = None, *, progress: bool = False
) -> IdentityReport:
    """Bring researcher identities up to date with the papers changed since the last
    run (an import's or a harvest's), ``PEOPLE_SLICE`` papers per transaction so a
    big backlog neither holds every paper in memory nor loses its work to a crash.
    ``known`` may hold current records of changed papers (saves decoding them again)."""
    total = IdentityReport()
    pending = data.people_pending()
    with tqdm(total=pending, unit="paper", desc="researchers", disable=not progress) as bar:
        while True:
            r = refresh_identities(data.store, known, data.config.lab, limit=PEOPLE_SLICE)
            total += r
            bar.update(min(r.papers, bar.total - bar.n))
            if r.papers < PEOPLE_SLICE:
                break
    data.people_generation = data.store.get_meta(PEOPLE_SEQ) or "0"
    return total
