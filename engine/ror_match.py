"""Matching raw affiliation strings to ROR ids, over the organisations of the registry
(``engine.ror`` reads them).

Matching prefers no answer to a wrong one: an affiliation is cut into its comma-separated
parts; a part (or a run of adjacent parts, as in "University of California, Davis") must
equal one of an organisation's names after normalisation, or contain a long distinctive
name as a run of words. A name shared by several organisations is settled by the country
or city named in the affiliation, or not at all. The first part that matches wins, as
affiliations run from the specific (a hospital, an institute) to the general.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

from papersift.engine.ror import Organisation

_ABBREVIATIONS = {
    "univ": "university", "universidade": "university", "inst": "institute",
    "tech": "technology", "technol": "technology", "natl": "national", "dept": "department",
    "hosp": "hospital", "coll": "college", "sch": "school", "ctr": "center", "centre": "center",
    "lab": "laboratory", "labs": "laboratories", "sci": "science", "acad": "academy",
    "med": "medical", "res": "research", "st": "saint", "and": "", "the": "", "of": "",
    "for": "", "in": "", "at": "", "de": "", "la": "", "di": "", "del": "", "der": "",
    "des": "", "du": "",
}  # fmt: skip
# A name found inside a longer part must be this many words (after dropping "of", "the"...)
# and hold a word that marks an organisation, so "Cancer Research" or "Physics" never match.
MIN_CONTAINED_WORDS = 3
_ORG_WORDS = frozenset(
    [
        "university",
        "college",
        "institute",
        "hospital",
        "school",
        "academy",
        "laboratory",
        "laboratories",
        "center",
        "museum",
        "observatory",
        "foundation",
        "agency",
        "council",
        "ministry",
        "company",
        "corporation",
        "society",
        "polytechnic",
        "universitat",
        "universite",
        "universita",
        "universidad",
        "technology",
    ]
)
_EXTENDERS = _ORG_WORDS | {"medical", "health", "affiliated", "clinic", "clinical"}
_UNIT_WORDS = frozenset(
    [
        "department",
        "school",
        "college",
        "faculty",
        "institute",
        "laboratory",
        "center",
        "division",
        "unit",
        "key",
        "state",
        "graduate",
        "program",
        "centro",
        "instituto",
        "institut",
        "departamento",
        "escuela",
        "facultad",
    ]
)
_COUNTRY_ALIASES = {
    "usa": "united states", "us": "united states", "u s a": "united states",
    "united states america": "united states", "uk": "united kingdom",
    "england": "united kingdom", "scotland": "united kingdom", "wales": "united kingdom",
    "pr china": "china", "p r china": "china", "peoples republic china": "china",
    "korea": "south korea", "republic korea": "south korea", "russian federation": "russia",
}  # fmt: skip


def normalise(text: str) -> str:
    """Words of an organisation name for matching: accents, case, punctuation and the
    usual abbreviations folded (``Toyohashi Univ. of Tech.`` -> ``toyohashi university
    technology``); "of", "the" and the like dropped."""
    text = html.unescape(text).replace("&", " and ")
    if not text.isascii():  # ASCII has no accents to strip (and most names are ASCII)
        text = unicodedata.normalize("NFKD", text)
        text = "".join(c for c in text if not unicodedata.combining(c))
    text = text.casefold()
    words = re.sub(r"[^\w]+", " ", text).split()
    out = [_ABBREVIATIONS.get(w, w) for w in words]
    return " ".join(w for w in out if w)


def match_keys(org: Organisation) -> tuple[str, ...]:
    """The normalised names the matcher knows an organisation by: its name and aliases, not
    its acronyms (an acronym names many places: with them, precision on ROR's gold set fell
    from 0.962 to 0.935)."""
    return tuple(sorted({normalise(n) for n in (org.name, *org.aliases)} - {""}))


@dataclass(frozen=True, slots=True)
class Match:
    ror_id: str
    name: str
    matched: str  # the part of the affiliation that matched
    how: str  # "exact" or "contained"


@dataclass(frozen=True, slots=True)
class Explanation:
    """A match and why: what the affiliation was cut into and what each piece named."""

    match: Match | None
    reason: str
    parts: tuple[str, ...]  # the normalised comma-separated parts
    places: tuple[str, ...]  # cities and countries recognised in them
    candidates: tuple[tuple[str, tuple[str, ...]], ...]  # (text, ROR ids it names)


@dataclass
class RorMatcher:
    """Affiliation string -> ROR id, over an in-memory index of organisation names."""

    orgs: dict[str, Organisation] = field(default_factory=dict)
    _names: dict[str, set[str]] = field(default_factory=dict)
    _longest: int = 0
    _places: set[str] = field(default_factory=set)
    _countries: set[str] = field(default_factory=set)

    @classmethod
    def from_organisations(cls, orgs: Iterable[Organisation]) -> RorMatcher:
        return cls.from_keyed((org, match_keys(org)) for org in orgs)

    @classmethod
    def from_keyed(cls, items: Iterable[tuple[Organisation, Iterable[str]]]) -> RorMatcher:
        """From organisations with their :func:`match_keys` already computed (as the store
        keeps them), so a build normalises only the few distinct places."""
        m = cls()
        place_keys: dict[str, str] = {}

        def place(text: str) -> str:
            if text not in place_keys:
                place_keys[text] = normalise(text)
            return place_keys[text]

        for org, keys in items:
            if org.status == "withdrawn":
                continue
            m.orgs[org.ror_id] = org
            for key in keys:
                m._names.setdefault(key, set()).add(org.ror_id)
                m._longest = max(m._longest, key.count(" ") + 1)
            m._places.update(place(p) for p in (org.country, org.city) if p)
            if org.country:
                m._countries.add(place(org.country))
        m._places.discard("")
        m._countries |= set(_COUNTRY_ALIASES.values())
        return m

    def match(self, affiliation: str) -> Match | None:
        """The organisation of this affiliation, or None when unsure."""
        return self.explain(affiliation).match

    def explain(self, affiliation: str) -> Explanation:
        """The match of :meth:`match` (None when unsure), with the reason in words."""
        parts = [normalise(p) for p in re.split(r"[,;()]|\s[-–]\s", html.unescape(affiliation))]
        parts = [p for p in parts if p]
        places = self._places_in(parts)
        countries = places & self._countries
        seen: list[tuple[str, tuple[str, ...]]] = []

        def done(match: Match | None, reason: str) -> Explanation:
            return Explanation(match, reason, tuple(parts), tuple(sorted(places)), tuple(seen))

        # Exact parts: runs of three, two, one adjacent parts ("university california davis"
        # before "university california").
        found: list[tuple[str, str]] = []
        taken: set[int] = set()
        for width in (3, 2, 1):
            for i in range(len(parts) - width + 1):
                if taken.intersection(range(i, i + width)):
                    continue
                text = " ".join(parts[i : i + width])
                ids = self._names.get(text)
                if ids:
                    seen.append((text, tuple(sorted(ids))))
                rid = self._pick(ids, places, countries)
                if rid is not None:
                    found.append((rid, text))
                    taken.update(range(i, i + width))
        exact = self._choose(found)
        if exact is not None:
            org = self.orgs[exact[0]]
            named = dict(seen)[exact[1]]
            why = f"the part {exact[1]!r} is a name of {org.name}"
            if len(named) > 1:
                why += f"; {len(named)} organisations share it, the place named settles it"
            return done(Match(exact[0], org.name, exact[1], "exact"), why)
        if found:
            names = "; ".join(sorted({self.orgs[r].name for r, _ in found}))
            why = f"unsure: the parts name {names} (a unit without its parent, or "
            return done(None, why + "organisations that contradict each other)")
        # Long, distinctive names inside a part, confirmed by the place.
        for part in parts:
            inside = self._contained(part, places, countries)
            if inside is not None:
                org = self.orgs[inside[0]]
                why = f"{inside[1]!r} inside a part is a name of {org.name}, in {org.city}, "
                return done(Match(inside[0], org.name, inside[1], "contained"),
                            why + "which the affiliation names")  # fmt: skip
        if seen:
            text, named = seen[0]
            if countries and not any(self._country(i) in countries for i in named):
                return done(None, f"{text!r} names organisations outside the country named")
            return done(None, f"{text!r} names {len(named)} organisations and no city or "
                        "country named tells them apart")  # fmt: skip
        return done(None, "no part is the name of an organisation in the registry")

    def _choose(self, found: list[tuple[str, str]]) -> tuple[str, str] | None:
        """A unit (department, institute) counts only with its parent named too; then the
        most specific organisation named wins."""
        ids = {rid for rid, _ in found}
        kept = []
        for rid, text in found:
            org = self.orgs[rid]
            orphan = self._unit(rid) and not ids.intersection(org.parents)
            if orphan and (len(ids) > 1 or len(text.split()) < 4):
                continue
            kept.append((rid, text))
        if not kept:
            return None
        children = [k for k in kept if ids.intersection(self.orgs[k[0]].parents)]
        if children:
            return children[0]
        distinct = {rid for rid, _ in kept}
        return kept[0] if len(distinct) == 1 else None

    def _country(self, rid: str) -> str:
        return normalise(self.orgs[rid].country)

    def _unit(self, rid: str) -> bool:
        """A department, school or institute inside a parent: "Department of Physics",
        "Institute of Biophysics" name many places, so they need their parent named."""
        org = self.orgs[rid]
        return bool(org.parents) and normalise(org.name).split()[0] in _UNIT_WORDS

    def _places_in(self, parts: list[str]) -> set[str]:
        words = " ".join(parts)
        found = {p for p in parts if p in self._places}
        found |= {v for k, v in _COUNTRY_ALIASES.items() if re.search(rf"\b{k}\b", words)}
        for part in parts:  # "Sheffield S10 2JF", "Southeast University Nanjing China"
            tokens = part.split()
            for n in (1, 2, 3):
                for i in range(len(tokens) - n + 1):
                    if " ".join(tokens[i : i + n]) in self._places:
                        found.add(" ".join(tokens[i : i + n]))
        return found

    def _pick(self, ids: set[str] | None, places: set[str], countries: set[str]) -> str | None:
        """One organisation of these, or None: a named country must be the organisation's;
        a name several organisations share needs the city or country to tell them apart."""
        if not ids:
            return None
        if countries:
            ids = {i for i in ids if normalise(self.orgs[i].country) in countries}
        if len(ids) == 1:
            return next(iter(ids))
        here = [
            i for i in ids
            if normalise(self.orgs[i].country) in places or normalise(self.orgs[i].city) in places
        ]  # fmt: skip
        return here[0] if len(here) == 1 else None

    def _contained(
        self, part: str, places: set[str], countries: set[str]
    ) -> tuple[str, str] | None:
        tokens = part.split()
        for n in range(min(len(tokens) - 1, self._longest), MIN_CONTAINED_WORDS - 1, -1):
            for i in range(len(tokens) - n + 1):
                words = tokens[i : i + n]
                if not _ORG_WORDS.intersection(words):
                    continue
                around = {*tokens[max(0, i - 1) : i], *tokens[i + n : i + n + 1]}
                if around & _EXTENDERS:
                    continue  # part of a longer name: "X University Hospital"
                rid = self._pick(self._names.get(" ".join(words)), places, countries)
                if rid is None:
                    continue
                org = self.orgs[rid]
                if self._unit(rid) or normalise(org.city) not in places:
                    continue  # inside a longer text, only an organisation of the named city
                return rid, " ".join(words)
        return None
