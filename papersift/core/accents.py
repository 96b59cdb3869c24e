"""TeX accents as the letters they make, and letters without their accents, for search.

arXiv's metadata writes accented letters in TeX: ``Schr\\"odinger``, ``Erd\\H{o}s``,
``Poincar\\'e``, ``{\\o}``. Indexed as they are, the tokenizer breaks the word at the
backslash ("schr", "odinger"), so neither "Schrödinger" nor "Schrodinger" found the ~1 in
150 arXiv papers that spell it so (1,406 of the first 200,000 of the bench snapshot).
``accented`` turns such commands into Unicode letters (cheaply, without a TeX parser: it is
run on every title and abstract indexed); the index's analyser then folds them to ASCII,
as it folds letters typed with accents.
"""

from __future__ import annotations

import re
import unicodedata

# Accent commands and the combining mark each puts on its letter.
_SYMBOL_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307",
}  # fmt: skip
_LETTER_ACCENTS = {
    "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328", "r": "\u030a",
    "d": "\u0323", "b": "\u0331",
}  # fmt: skip
# Letters TeX names by a command of their own.
_LETTERS = {
    "ss": "ß", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ", "aa": "å", "AA": "Å", "o": "ø",
    "O": "Ø", "l": "ł", "L": "Ł", "i": "ı", "j": "ȷ",
}  # fmt: skip


def _argument(braced: str, bare: str, space: str) -> str:
    """An accent's letter: in braces (``{o}``, ``{\\i}``) or after ``space`` (``o``)."""
    letter = r"\\[ij]|[A-Za-z]"
    return (
        rf"(?:\{{\s*(?P<{braced}>{letter})\s*\}}"
        rf"|{space}(?P<{bare}>\\[ij](?![A-Za-z])|[A-Za-z]))(?:(?<=\\[ij])\s(?=[A-Za-z]))?"
    )


# \"o, \"{o}, \" o, \'{\i}; a letter accent needs braces or a space: \v{c}, \c c (not \rho).
_SYMBOL = r"\\(?P<s>[\"'`^~=.])" + _argument("sb", "sl", r"\s*")
_LETTER = r"\\(?P<w>[uvHckrdb])" + _argument("wb", "wl", r"\s+")
_NAMED = r"\\(?P<x>ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![A-Za-z])(?:\{\}|\s(?=[A-Za-z]))?"
_UNIT = f"{_SYMBOL}|{_LETTER}|{_NAMED}"
# A unit may sit in its own group ({\"o}, {\o}): the group goes with it. Another command's
# argument group (\textit{\"o}) and a TeX line break (\\) are passed over as they are.
_PLAIN_UNIT = re.sub(r"\?P<\w+>", "?:", _UNIT)
_ACCENT = re.compile(
    rf"\{{\s*(?:{_PLAIN_UNIT})\s*\}}|{_PLAIN_UNIT}|(?P<keep>\\\\|\\[A-Za-z]+\s*\{{)"
)
_ONE = re.compile(_UNIT)
_ANY_UNIT = re.compile(_PLAIN_UNIT)


def _letter(m: re.Match[str]) -> str:
    if m["keep"]:
        return m[0]
    unit = _ONE.search(m[0])
    if unit is None:  # cannot happen: the match holds a unit
        return m[0]
    if unit["x"]:
        return _LETTERS[unit["x"]]
    base = unit["sb"] or unit["sl"] or unit["wb"] or unit["wl"] or ""
    base = base[1:] if base.startswith("\\") else base  # \'{\i}: the dotless i takes the accent
    mark = _SYMBOL_ACCENTS[unit["s"]] if unit["s"] else _LETTER_ACCENTS[unit["w"]]
    return unicodedata.normalize("NFC", base + mark)


def accented(text: str) -> str:
    """``text`` with TeX accent commands as Unicode letters: ``Schr\\"odinger`` ->
    Schrödinger, ``Erd\\H{o}s`` -> Erdős, ``{\\o}`` -> ø. Other TeX is left as it is."""
    if "\\" not in text or _ANY_UNIT.search(text) is None:  # most TeX has no accent
        return text
    return _ACCENT.sub(_letter, text)


def _fold_table() -> dict[int, str]:
    """Each Latin letter with a diacritic (U+00C0-U+024F) -> its base letter, one for one."""
    table = {}
    for code in range(0xC0, 0x250):
        base = unicodedata.normalize("NFKD", chr(code))[:1]
        if base.isascii() and base.isalpha() and base != chr(code):
            table[code] = base
    for letter, base in (("ß", "s"), ("æ", "a"), ("Æ", "A"), ("œ", "o"), ("Œ", "O"),
                         ("ø", "o"), ("Ø", "O"), ("ł", "l"), ("Ł", "L"), ("ı", "i"),
                         ("đ", "d"), ("Đ", "D"), ("ð", "d"), ("þ", "t")):  # fmt: skip
        table[ord(letter)] = base
    return table


FOLD_SAME_LENGTH = _fold_table()


def fold_same_length(text: str) -> str:
    """``text`` with accented Latin letters as their base letters, one character for one
    (offsets stay valid; "ß" becomes "s" where the index's folding makes "ss")."""
    return text if text.isascii() else text.translate(FOLD_SAME_LENGTH)
