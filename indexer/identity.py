"""Researcher identity: cluster the papers' authorships into researchers with stable ids.

Rules, strongest first (all inside one block: same surname, same first initial):

1. Equal external ids (ORCID, OpenAlex, Semantic Scholar) join; different values of one
   source never join.
2. The same normalised name with a spelled-out first name joins ("Balázs Kégl" = "Balazs
   Kegl" = "B\\'alazs K\\'egl"), unless it is common: hundreds of papers in a block of
   hundreds of first names ("Wei Zhang" in "zhang w") are many people, and two of its
   papers join only where each has the same two co-authors (their names; without them,
   surname and initial). Identical names of two or more initials ("S. W. Hawking") join
   too in a rare block: at most ``RARE_ROWS`` authorships, no sign of two people.
3. Different but compatible spellings ("J. Smith", "John A. Smith", "Guenther"/"Günther";
   not "Wei Zhang" and "Wei-Ning Zhang": a hyphenated first name is one name) join only
   with evidence, a shared co-author (surname and initial) or a shared id.
   Other initials-only names need that evidence even when spelled identically. Two candidates
   for one unit are ambiguous, unless the block shows no sign of two people (no two
   spellings that cannot be one person, no two of its names on one paper): then they are
   one person and all join at once ("J. M. F. Labastida" on four papers with "M. Mariño":
   each is the others' candidate). ``bench/identity_precision.py`` measures the trade.
4. Two authors of one paper are never joined.

Ids are stable: each new cluster keeps the id most of its authorships had before; a
cluster that lost its id to a merge leaves a redirect (``merged_into``). Only blocks
touched by papers changed since the last run are recomputed
(:mod:`indexer.identity_refresh` keeps the tables; this module holds the rules).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import combinations

from papersift.core.names import (
    NameParts,
    compatible,
    compound_given,
    loose_given,
    specificity,
    split_name,
)

MAX_ROUNDS = 6
# A common name (rule 2): this many authorships of one spelled-out name, in a block of this
# many different spelled-out first names ("Wei Zhang": 340 of 1,899 in "zhang w", 201 first
# names; "Saharon Shelah": 739, one first name). Such a name is many people.
COMMON_PAPERS = 100
COMMON_FIRSTS = 150
# A rare block (rule 2): at most this many authorships, and no sign of two people in them.
RARE_ROWS = 50


@dataclass(slots=True)
class Row:
    """One authorship: an author at a position of a paper."""

    docid: int
    position: int
    n_authors: int
    name: str
    key: str
    ids: frozenset[tuple[str, str]]
    old_rid: int | None
    new: bool = False  # a row of a changed paper, not yet in the authorships table


@dataclass(slots=True)
class Unit:
    """A researcher under construction: the authorships joined so far and their evidence."""

    rows: list[Row]
    parts: dict[str, NameParts]  # distinct keys
    ids: dict[str, set[str]] = field(default_factory=dict)
    docids: set[int] = field(default_factory=set)
    coauthors: set[str] = field(default_factory=set)
    # Two co-authors' names on one paper, for a common name (rule 2): its papers' pairs.
    pairs: set[tuple[str, str]] = field(default_factory=set)

    def absorb(self, other: Unit) -> None:
        self.rows += other.rows
        self.parts.update(other.parts)
        for s, vs in other.ids.items():
            self.ids.setdefault(s, set()).update(vs)
        self.docids |= other.docids
        self.coauthors |= other.coauthors
        self.pairs |= other.pairs

    def conflicts(self, other: Unit) -> bool:
        if self.docids & other.docids:
            return True
        return any(s in other.ids and vs != other.ids[s] for s, vs in self.ids.items())

    def compatible(self, other: Unit) -> bool:
        return all(
            _keys_compatible(a, b, p.compound, q.compound)
            for a, p in self.parts.items()
            for b, q in other.parts.items()
        )

    def full(self) -> bool:
        return any(p.full for p in self.parts.values())


def _parts(key: str, compound: bool = False) -> NameParts:
    p = split_name(key)
    return replace(p, compound=True) if compound and not p.collective else p


@lru_cache(maxsize=1 << 18)
def _keys_compatible(a: str, b: str, ca: bool = False, cb: bool = False) -> bool:
    """``compatible`` on keys; ``ca``/``cb``: the key was written with a hyphenated first
    name (``papersift.core.names.compound_given``), which its key no longer shows."""
    return compatible(_parts(a, ca), _parts(b, cb))


def cluster(
    rows: list[Row], coauthors: dict[int, set[str]], names: dict[int, set[str]] | None = None
) -> list[Unit]:
    """The researchers of one block (rules 1-4 of the module docstring). ``coauthors``:
    each paper's co-author blocks; ``names``: their names (keys), read for common names
    (``common_names``), whose evidence they are: without them, the blocks."""
    units: list[Unit] = []
    by_id: dict[tuple[str, str], Unit] = {}
    by_key: dict[str, list[Unit]] = defaultdict(list)
    # (key, docid) -> how many units of by_key[key] hold that paper: when all do (one name
    # many times on one paper), none can take the row, found without scanning them all.
    holding: Counter[tuple[str, int]] = Counter()
    created: dict[int, str] = {}  # id(unit) -> the key it is listed under in by_key
    common = common_names(rows)
    compound = {r.key for r in rows if "-" in r.name and compound_given(r.name)}
    # The block's spellings, read before clustering in a small block (rule 2) and kept.
    spellings = _spellings({r.key for r in rows}, compound) if len(rows) <= RARE_ROWS else {}
    rare = bool(spellings) and not _crowded(rows, spellings)
    for r in rows:
        parts = _parts(r.key, r.key in compound)
        unit = Unit([r], {r.key: parts}, {}, {r.docid}, set(coauthors.get(r.docid, ())))
        if r.key in common:
            theirs = names.get(r.docid, set()) - {r.key} if names is not None else unit.coauthors
            unit.pairs = set(combinations(sorted(theirs), 2))
        for s, v in r.ids:
            unit.ids.setdefault(s, set()).add(v)
        home = next((by_id[i] for i in r.ids if i in by_id), None)
        same_spelling = parts.full or parts.collective or (rare and len(parts.given) > 1)
        if home is None and same_spelling and r.key not in common:
            listed = by_key[r.key]
            if holding[(r.key, r.docid)] < len(listed):
                same = [u for u in listed if not u.conflicts(unit)]
                # Two units of one name exist when it is on one paper twice; join the
                # larger. If two of them carry ids (two ORCIDs, one name), it is ambiguous.
                if sum(bool(u.ids) for u in same) <= 1 and same:
                    home = max(same, key=lambda u: len(u.docids))
        if home is not None and not home.conflicts(unit):
            key = created.get(id(home))
            if key is not None and r.docid not in home.docids:
                holding[(key, r.docid)] += 1
            home.absorb(unit)
            unit = home
        else:
            units.append(unit)
            by_key[r.key].append(unit)
            created[id(unit)] = r.key
            holding[(r.key, r.docid)] += 1
        for i in r.ids:
            by_id.setdefault(i, unit)
    if len(units) < 2:
        return units
    spellings = spellings or _spellings({k for v in units for k in v.parts}, compound)
    crowded = _crowded(rows, spellings)
    for _ in range(MAX_ROUNDS):
        if not _attach_round(units, spellings, crowded, common):
            break
    return units


def common_names(rows: list[Row]) -> set[str]:
    """The spelled-out names of the block too common to be one person by their spelling
    alone (rule 2): ``COMMON_PAPERS`` authorships where ``COMMON_FIRSTS`` first names share
    the surname and initial."""
    used = Counter(r.key for r in rows)
    many = [k for k, n in used.items() if n >= COMMON_PAPERS]
    if not many:
        return set()
    firsts = {p.given[0] for p in map(split_name, used) if p.given and len(p.given[0]) > 1}
    if len({loose_given(g) for g in firsts}) < COMMON_FIRSTS:
        return set()
    return {k for k in many if split_name(k).full and not split_name(k).collective}


def _crowded(rows: list[Row], spellings: dict[str, list[str]]) -> bool:
    """Whether the block shows two people ("Yi Zhang" and "Yu Zhang", or two of its names
    on one paper), so that two candidates of one unit may be two people (rule 3)."""
    if any(len(near) < len(spellings) for near in spellings.values()):
        return True
    docids = [r.docid for r in rows]
    return len(set(docids)) < len(docids)


def _spellings(keys: set[str], compound: set[str] | None = None) -> dict[str, list[str]]:
    """Each key of a block -> the keys compatible with it (itself included); ``compound``:
    the keys written with a hyphenated first name (``_keys_compatible``).

    Indexed by the first given name, so a block of thousands of distinct full first names
    ("Author0 Many", "Author1 Many", ...) costs a pass, not every pair: two keys can only be
    compatible if their first given names match loosely, or one of them is an initial (or
    missing; ``papersift.core.names.given_compatible``). Collective names match only themselves.
    """
    by_first: dict[str, list[str]] = defaultdict(list)
    open_keys: list[str] = []  # first given name an initial or missing: may match any
    for k in keys:
        p = split_name(k)
        if p.collective:
            continue
        if not p.given or len(p.given[0]) == 1:
            open_keys.append(k)
        else:
            by_first[loose_given(p.given[0])].append(k)
    out: dict[str, list[str]] = {}
    hyphen = compound or set()
    for k in keys:
        p = split_name(k)
        if p.collective:
            near = [k]
        elif not p.given or len(p.given[0]) == 1:
            near = list(keys)
        else:
            near = [*by_first[loose_given(p.given[0])], *open_keys]
        out[k] = [k2 for k2 in near if _keys_compatible(k, k2, k in hyphen, k2 in hyphen)]
    return out


def _attach_round(
    units: list[Unit], spellings: dict[str, list[str]], crowded: bool, common: set[str]
) -> bool:
    """Join each unit to its compatible, evidenced candidates (one, or several when the
    block is not ``crowded``); True if anything joined. ``spellings`` maps each key of the
    block to the keys compatible with it; ``common`` holds its common names."""
    # A one-spelling unit no other unit could match is neither a candidate nor has one.
    per_key = Counter(k for v in units for k in v.parts)
    active = [
        v
        for v in units
        if len(v.parts) > 1 or sum(per_key[k] for k in spellings[next(iter(v.parts))]) > 1
    ]
    if len(active) < 2:
        return False
    merged = False
    order = sorted(active, key=lambda u: (u.full(), min(specificity(p) for p in u.parts.values())))
    # Evidence index: (co-author block or external id, name key) -> units that have both,
    # so a unit only looks at candidates with a compatible spelling (big blocks such as
    # "wang y" share co-author blocks widely). Units absorbed during the round are followed
    # to their new home.
    having: dict[tuple[object, str], list[Unit]] = defaultdict(list)
    for v in active:
        for k in v.parts:
            for c in v.coauthors:
                having[(c, k)].append(v)
            for src, values in v.ids.items():
                for value in values:
                    having[((src, value), k)].append(v)
    home: dict[int, Unit] = {}

    def resolve(v: Unit) -> Unit:
        top = v
        while id(top) in home:
            top = home[id(top)]
        while v is not top:  # path compression: chains stay short in big blocks
            home[id(v)], v = top, home[id(v)]
        return top

    for u in order:
        if id(u) in home:
            continue
        first = next(iter(u.parts))
        mine = common.intersection(u.parts)
        found = _candidates(u, spellings[first], having, resolve, crowded, mine)
        if found:
            group = [u, *found]
            into = max(group, key=lambda w: len(w.rows))  # copy the smaller ones
            for v in group:
                if v is not into:
                    into.absorb(v)
                    home[id(v)] = into
            merged = True
    units[:] = [u for u in units if id(u) not in home]
    return merged


def _candidates(
    u: Unit,
    near: list[str],
    having: dict[tuple[object, str], list[Unit]],
    resolve: Callable[[Unit], Unit],
    crowded: bool,
    common: set[str] | None = None,
) -> list[Unit]:
    """The units that share evidence with ``u`` and could be the same person (rule 3), or
    none: a second one in a ``crowded`` block, or two that cannot be one person (different
    ids), is ambiguous, so stop looking. ``near`` holds the spellings compatible with one of
    u's keys; a candidate's keys must all be among them.

    ``common``: the common names (rule 2) among u's; a unit that has one of them too is
    taken when a paper of its has two co-authors of one of u's, and never with less: "Wei Zhang"
    and "Wei Zhang" with a "Li X." each are no more one person than two strangers of that
    name, and all the co-authors of a grown unit would meet anyone's."""
    evidence = [*u.coauthors, *((s, x) for s, vs in u.ids.items() for x in vs)]
    found: list[Unit] = []
    docs: set[int] = set()
    ids: dict[str, set[str]] = {}
    checked = {id(u)}
    for e in evidence:
        for k in near:
            listed = having.get((e, k))
            if not listed:
                continue
            # The units listed, followed to their homes, once each: a list joined into
            # one unit is read once, not once per unit that shares the evidence.
            listed[:] = {id(w): w for w in map(resolve, listed)}.values()
            for v in listed:
                if id(v) in checked:
                    continue
                checked.add(id(v))
                if u.compatible(v) and not u.conflicts(v):
                    if common and not common.isdisjoint(v.parts):
                        if u.pairs.isdisjoint(v.pairs) or _clash(v, docs, ids):
                            continue
                    elif found and (crowded or _clash(v, docs, ids)):
                        return []
                    found.append(v)
                    docs |= v.docids
                    for src, values in v.ids.items():
                        ids[src] = values
    return found


def _clash(v: Unit, docs: set[int], ids: dict[str, set[str]]) -> bool:
    """Whether ``v`` cannot be the person of the candidates found so far: one paper, or
    other ids (the papers and ids of candidates that agree with each other)."""
    return bool(v.docids & docs) or any(s in ids and ids[s] != vs for s, vs in v.ids.items())


def display(u: Unit) -> tuple[str, str]:
    """The spelling most of the papers use, full ones first (ties: the most specific), and
    among its forms the most used (accents preferred): "Wei Zhang" on 336 papers, not
    "Wei-Ning Zhang" on one that joined them."""
    used = Counter(r.key for r in u.rows)
    full = [k for k in used if u.parts[k].full] or list(used)
    key = min(full, key=lambda k: (-used[k], specificity(u.parts[k]), k))
    forms = Counter(r.name for r in u.rows if r.key == key)
    name = max(forms, key=lambda n: (forms[n], not n.isascii(), n))
    return name, key
