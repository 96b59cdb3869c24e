"""The ROR affiliation matcher over the stored institutions, for enrichment, the CLI and API.

Building it normalises nothing but places (the store keeps each organisation's match keys),
and it is built once per registry version: every ``import-ror`` bumps the version, so the
next match in any process sees the new registry. One function, :func:`explain`, is what
``papersift match-affiliation``, ``/api/v1/institutions/match`` and enrichment all call.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import Annotated
from weakref import WeakKeyDictionary

import msgspec
from msgspec import Meta

from papersift.core.wording import counted
from papersift.engine.institutions import Institution, Institutions
from papersift.engine.ror import ROR_PREFIX
from papersift.engine.ror_match import Explanation, RorMatcher
from papersift.engine.store import PaperStore

MAX_AFFILIATION = 1000  # characters; ROR's gold affiliations are at most 508
_CACHE: WeakKeyDictionary[PaperStore, tuple[int, RorMatcher]] = WeakKeyDictionary()
_LOCK = threading.Lock()


def matcher(registry: Institutions) -> RorMatcher:
    """The matcher of the registry as it is now (cached per store and registry version)."""
    version = registry.version()
    with _LOCK:  # one build at a time; the others wait for it rather than build it too
        cached = _CACHE.get(registry.store)
        if cached is None or cached[0] != version:
            cached = (version, RorMatcher.from_keyed(registry.keyed_organisations()))
            _CACHE[registry.store] = cached
    return cached[1]


@dataclass(frozen=True, slots=True)
class AffiliationMatch:
    """What :func:`explain` found: the matcher's reasoning and our institution record."""

    text: str
    explanation: Explanation
    institution: Institution | None  # the matched organisation as stored


def explain(registry: Institutions, text: str) -> AffiliationMatch:
    """Match one raw affiliation string; ``ValueError`` if it is longer than
    :data:`MAX_AFFILIATION`."""
    if len(text) > MAX_AFFILIATION:
        raise ValueError(f"an affiliation is at most {MAX_AFFILIATION} characters ({len(text)})")
    m = matcher(registry)
    why = m.explain(text)
    if not m.orgs:
        why = replace(why, reason="no institutions in this index: import the ROR registry "
                      "first (papersift import-ror FILE)")  # fmt: skip
    elif why.match is None and not why.candidates:
        why = replace(why, reason=_acronym_reason(registry, why.parts) or why.reason)
    found = registry.by_ror(why.match.ror_id) if why.match is not None else None
    return AffiliationMatch(text, why, found)


def _acronym_reason(registry: Institutions, parts: tuple[str, ...]) -> str | None:
    """Why a part the registry knows (by an acronym, which the matcher does not go by) did
    not match: "no part is the name of an organisation" was wrong for "MIT"."""
    for part in parts:
        named = registry.by_name(part)
        if named:
            shown = ", ".join(i.name for i in named[:3]) + (", ..." if len(named) > 3 else "")
            return (
                f"{part!r} is an acronym of {counted(len(named), 'organisation')} ({shown}), "
                "and acronyms are not matched (one names many places): write the name"
            )
    return None


Uri = Annotated[str, Meta(extra_json_schema={"format": "uri"})]


class RorMatch(msgspec.Struct):
    ror: Uri
    name: str
    matched: Annotated[str, Meta(description="The normalised words.")]
    how: Annotated[str, Meta(extra_json_schema={"enum": ["exact", "contained"]})]
    id: Annotated[int, Meta(ge=1)] | None


class Candidate(msgspec.Struct):
    text: str
    ror: list[Uri]


class Explained(msgspec.Struct):
    """An affiliation string, the ROR organisation it names (or none), and why."""

    affiliation: Annotated[str, Meta(description="The text matched (cleaned).")]
    match: Annotated[
        RorMatch | None, Meta(description="Null when unsure: no match rather than a wrong one.")
    ]
    reason: Annotated[str, Meta(description="Why it matched, or why not, in words.")]
    parts: list[str]
    places: list[str]
    candidates: list[Candidate]


def as_json(found: AffiliationMatch) -> Explained:
    """The match and its reasons as the CLI's ``--json`` prints them (the API adds the
    institution: ``server.schemas_institutions.AffiliationMatch``)."""
    why, inst = found.explanation, found.institution
    match = None
    if why.match is not None:
        match = RorMatch(
            ror=ROR_PREFIX + why.match.ror_id,
            name=why.match.name,
            matched=why.match.matched,
            how=why.match.how,
            id=inst.iid if inst is not None else None,
        )
    return Explained(
        affiliation=found.text,
        match=match,
        reason=why.reason,
        parts=list(why.parts),
        places=list(why.places),
        candidates=[Candidate(text, [ROR_PREFIX + r for r in ids]) for text, ids in why.candidates],
    )
