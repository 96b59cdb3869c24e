"""Person names as matching structures: surname, given names, suffix, block key, compatibility.

Input is the normalised key of ``papersift.core.authors.normalise_name`` ("balazs kegl",
"c p yuan", "john smith jr"), so Unicode, TeX accents, case and punctuation are settled.
Researchers are only ever compared inside one *block*: the same surname and first initial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

SUFFIXES = {"jr": "jr", "jnr": "jr", "sr": "sr", "snr": "sr", "ii": "ii", "iii": "iii", "iv": "iv"}
_COLLECTIVE = re.compile(
    r"\b(?:collaborations?|consortium|group|team|project|committee|collective|network|"
    r"observatory|experiment|survey|institute|laboratory|university|authors)\b"
)

_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da", "la", "le"})


@dataclass(frozen=True, slots=True)
class NameParts:
    """A normalised name split for matching; ``given`` may hold initials (one letter)."""

    key: str  # the normalised key without the suffix
    surname: str
    given: tuple[str, ...]
    suffix: str  # "", "jr", "sr", "ii", "iii", "iv"
    collective: bool
    compound: bool = False  # the first two given names are one, hyphenated ("Wei-Ning")

    @property
    def block(self) -> str:
        """Where candidates for the same person are looked for: ``kegl b``."""
        if self.collective:
            return "~" + self.key
        surname = loose(self.surname)
        return f"{surname} {self.given[0][0]}" if self.given else surname

    @property
    def full(self) -> bool:
        """A given name is spelled out: ``john smith``, ``c lee giles``; not ``j a smith``."""
        return any(len(g) > 1 for g in self.given)


@lru_cache(maxsize=1 << 18)
def split_name(key: str) -> NameParts:
    """``"john a smith jr"`` -> surname ``smith``, given ``("john", "a")``, suffix ``jr``."""
    tokens = key.split()
    if _COLLECTIVE.search(key):
        return NameParts(key, key, (), "", True)
    suffix = ""
    if len(tokens) > 2 and tokens[-1] in SUFFIXES:
        suffix = SUFFIXES[tokens.pop()]
    if not tokens:
        return NameParts(key, key, (), suffix, False)
    surname, given = tokens[-1], tuple(tokens[:-1])
    # Particles after the first given name ("felix de moya anegon") are not compared as
    # given names; a first token is always a name ("Le Li", "Da Li").
    given = given[:1] + tuple(g for g in given[1:] if g not in _PARTICLES)
    return NameParts(" ".join(tokens), surname, given, suffix, False)


@lru_cache(maxsize=1 << 16)
def loose(surname: str) -> str:
    """German transliteration folded in surnames: ``mueller`` and ``muller`` (from "Müller")
    meet; not at the end of a word, where "ue" is pinyin (Xue and Yue are not Xu and Yu)."""
    return _UMLAUT.sub(r"\1", surname)


@lru_cache(maxsize=1 << 16)
def loose_given(name: str) -> str:
    """The same for given names, more carefully: only "ue" and "oe", and "ue" not after the
    letters that make it a pinyin syllable (Xinyue is not Xinyu; Rüdiger is Ruediger), unless
    no pinyin syllable could follow (Juergen is Jürgen)."""
    return _UMLAUT_GIVEN.sub(lambda m: m.group(0)[0], name)


_UMLAUT = re.compile(r"([aou])e(?=[a-z])")
# After j, q, x, y, l, n "ue" is pinyin, unless two consonants follow that cannot open a
# pinyin syllable ("Juergen" is Jürgen; "Juechen", "Xuelin" stay).
_UMLAUT_GIVEN = re.compile(
    r"(?:(?<![jqxyln])u|o)e(?=[a-z])|(?<=[jqxyln])ue(?=(?![zcs]h)[b-df-hj-np-tv-z]{2})"
)


def _token_match(x: str, y: str) -> bool:
    if len(x) == 1 or len(y) == 1:
        return x[0] == y[0]
    return x == y or loose_given(x) == loose_given(y)


def given_compatible(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Could these given names belong to one person? ``(j,)`` ~ ``(john, a)``; ``(john,)``
    !~ ``(james,)``. The first names must match (an initial matches its name); the other
    given names of the shorter list must appear, in order, among those of the longer one,
    so a missing middle name is compatible and a different one is not."""
    if not a or not b:
        return True
    if not _token_match(a[0], b[0]):
        return False
    short, long_ = (a[1:], b[1:]) if len(a) <= len(b) else (b[1:], a[1:])
    i = 0
    for x in short:
        while i < len(long_) and not _token_match(x, long_[i]):
            i += 1
        if i == len(long_):
            return False
        i += 1
    return True


def compatible(a: NameParts, b: NameParts) -> bool:
    """Same block, compatible given names, no conflicting suffix (Jr. vs Sr.), and a
    hyphenated first name kept whole (``_keeps_compound``)."""
    if a.collective or b.collective:
        return a.key == b.key
    if loose(a.surname) != loose(b.surname):
        return False
    if a.suffix and b.suffix and a.suffix != b.suffix:
        return False
    if not (_keeps_compound(a, b) and _keeps_compound(b, a)):
        return False
    return given_compatible(a.given, b.given)


def _keeps_compound(a: NameParts, b: NameParts) -> bool:
    """A hyphenated first name is one name: "Wei-Ning" (or "J.-P.") meets "Wei Ning",
    "Wei N." and "W.", but a spelled-out "Wei" (or "Jean") alone is another name, as "Yu"
    is not "Yi"."""
    if not a.compound or len(a.given) < 2 or not b.given or len(b.given[0]) == 1:
        return True
    return len(b.given) > 1 and _token_match(a.given[1], b.given[1])


_COMPOUND = re.compile(r"^\s*[^\W\d_]+\.?\s*-\s*[^\W\d_]")


def compound_given(name: str) -> bool:
    """Whether a written name (not a key: keys lose the hyphen) opens with a hyphenated
    first name: "Wei-Ning Zhang", "J.-P. Serre", "J. -B. Maillet"."""
    return len(name.split()) > 1 and _COMPOUND.match(name) is not None


def specificity(p: NameParts) -> tuple[int, int, int]:
    """Sort key, most specific first: spelled-out names, more given names, longer."""
    return (-sum(len(g) > 1 for g in p.given), -len(p.given), -len(p.key))
