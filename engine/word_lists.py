"""Which words are words of a natural language, so that "did you mean" (``engine.spelling``)
leaves them alone.

The index knows only its own papers' words: in a corpus on one field "halo" is held by no
paper and one edit from the surname "Hao", "quasar" two from "quasi". A user who typed a
real word meant it; the answer should say the index does not hold it, not correct it.
The word-frequency lists of pyspellchecker (word counts in subtitles and other running
text, per language) say which words are real. Their lowest count (50) marks words taken
from a dictionary and never seen in running text ("sematic", "ternion"): those are as
likely a typo of a common word as meant, so only words above it count.
"""

from __future__ import annotations

import gzip
import logging
import unicodedata
from collections.abc import Iterable
from functools import cache
from importlib import resources

import msgspec

log = logging.getLogger(__name__)

ENGLISH = "en"
# Languages in the Latin script whose words a query may be in (the papers' metadata is
# English; a query in one of these is read by the model but not corrected into English).
OTHERS = ("de", "es", "fr", "it", "nl", "pt")


def fold(word: str) -> str:
    """Lower case without accents, as the index's analyser folds a typed word."""
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


@cache
def words_of(language: str) -> frozenset[str]:
    """The folded words of ``language`` seen in running text (above the list's lowest
    count); empty, with a warning, when the list cannot be read."""
    try:
        path = resources.files("spellchecker") / "resources" / f"{language}.json.gz"
        raw = gzip.decompress(path.read_bytes())
        counts = msgspec.json.decode(raw, type=dict[str, int])  # ~2x json's speed here
    except (ImportError, OSError, ValueError, msgspec.DecodeError) as exc:
        log.warning("no word list for %r (%s): its words may get spelling suggestions",
                    language, exc)  # fmt: skip
        return frozenset()
    floor = min(counts.values(), default=0)
    return frozenset(fold(w) for w, n in counts.items() if n > floor and w.isalpha())


def load_all() -> None:
    """Read every list now (~0.1 s for English, ~1 s for all on a quiet core), so that
    a server's first query with a word no paper holds does not wait for them."""
    for language in (ENGLISH, *OTHERS):
        words_of(language)


def is_english(word: str) -> bool:
    """Whether ``word`` is an English word (in running text, any case or accents)."""
    return fold(word) in words_of(ENGLISH)


def foreign_language(words: Iterable[str]) -> str | None:
    """The language other than English that holds every one of ``words`` (two or more)
    when English holds none of them: the query is in that language, not misspelt."""
    folded = [fold(w) for w in words]
    if len(folded) < 2 or any(w in words_of(ENGLISH) for w in folded):
        return None
    return next((lang for lang in OTHERS if all(w in words_of(lang) for w in folded)), None)
