"""TeX accents as the letters they make, and letters without their accents, for search,
name keys and URL slugs.

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


def _argument(braced: str, bare: str | None) -> str:
    """An accent's letter: in braces (``{o}``, ``{\\i}``) or, when ``bare`` names a group,
    right after the command (``o``, ``\\i``)."""
    letter = r"\\[ij]|[A-Za-z]"
    group = rf"\{{\s*(?P<{braced}>{letter})\s*\}}"
    if bare is None:
        return group
    # TeX drops the space after a control word: Mart\'\i nez is one word.
    return rf"(?:{group}|(?P<{bare}>\\[ij](?![A-Za-z])|[A-Za-z]))(?:(?<=\\[ij])\s(?=[A-Za-z]))?"


# \"o, \"{o}, \'{\i}: the letter right after the accent (no space: \" in a query is more
# often an escaped quote); a letter accent needs braces (\d{h}, \H{o}: not \delta, \Huge),
# or for the three common in names a space: \v Cech, Fran\c cois, \u g (not \rho, \cite).
_SYMBOL = r"\\(?P<s>[\"'`^~=.])" + _argument("sb", "sl")
_LETTER = r"\\(?P<w>[uvHckrdb])" + _argument("wb", None)
_SPACED = r"\\(?P<v>[vcu])\s+(?P<vl>[A-Za-z])"
_NAMED = r"\\(?P<x>ss|ae|AE|oe|OE|aa|AA|o|O|l|L|i|j)(?![A-Za-z])(?:\{\}|\s(?=[A-Za-z]))?"
_UNIT = f"{_SYMBOL}|{_LETTER}|{_SPACED}|{_NAMED}"
# A unit may sit in its own group ({\"o}, {\o}): the group goes with it. Another command's
# argument group (\textit{\"o}) and a TeX line break (\\) are passed over as they are.
_PLAIN_UNIT = re.sub(r"\?P<\w+>", "?:", _UNIT)
_ACCENT = re.compile(
    rf"\{{\s*(?:{_PLAIN_UNIT})\s*\}}|{_PLAIN_UNIT}|(?P<keep>\\\\|\\[A-Za-z]+\s*\{{)"
)
_ONE = re.compile(_UNIT)
_ANY_UNIT = re.compile(_PLAIN_UNIT)
# TeX math spans ($$...$$, $...$, \(...\)), each one's content a group (core.tex uses them).
MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)", re.DOTALL)


def _letter(m: re.Match[str]) -> str:
    if m["keep"]:
        return m[0]
    unit = _ONE.search(m[0])
    if unit is None:  # cannot happen: the match holds a unit
        return m[0]
    if unit["x"]:
        return _LETTERS[unit["x"]]
    base = unit["sb"] or unit["sl"] or unit["wb"] or unit["vl"] or ""
    base = base[1:] if base.startswith("\\") else base  # \'{\i}: the dotless i takes the accent
    accent = unit["s"] or unit["w"] or unit["v"]
    mark = _SYMBOL_ACCENTS[accent] if unit["s"] else _LETTER_ACCENTS[accent]
    return unicodedata.normalize("NFC", base + mark)


def accented(text: str) -> str:
    """``text`` with TeX accent commands as Unicode letters: ``Schr\\"odinger`` ->
    Schrödinger, ``Erd\\H{o}s`` -> Erdős, ``{\\o}`` -> ø. Other TeX is left as it is."""
    if "\\" not in text or _ANY_UNIT.search(text) is None:  # most TeX has no accent
        return text
    if "$" not in text and "\\(" not in text:
        return _ACCENT.sub(_letter, text)
    out, at = [], 0
    for m in MATH.finditer(text):  # math is left to KaTeX as written: $\L^2$, $x\~y$
        out += [_ACCENT.sub(_letter, text[at : m.start()]), m[0]]
        at = m.end()
    out.append(_ACCENT.sub(_letter, text[at:]))
    return "".join(out)


def _fold_table() -> dict[int, str]:
    """Each Latin letter with a diacritic (U+00C0-U+024F, U+1E00-U+1EFF) -> its base
    letter, one for one."""
    table = {}
    for code in (*range(0xC0, 0x250), *range(0x1E00, 0x1F00)):
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
    (offsets stay valid). Where the index's folding makes two letters ("ß" -> "ss", "æ" ->
    "ae", the ligature "ﬁ" -> "fi") this gives one, so "why this result" may miss such a
    word; search and highlighting use the index's own folding."""
    return text if text.isascii() else text.translate(FOLD_SAME_LENGTH)


# Accents that NFKD splits off Latin, Greek and Cyrillic letters.  Not every combining
# mark: the kana voicing marks (U+3099) must survive, or "が" would match "か".
_COMBINING = re.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")
# Letters that NFKD does not decompose.
_FOLD = str.maketrans({
    "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "ß": "ss", "æ": "ae", "Æ": "AE", "œ": "oe",
    "Œ": "OE", "đ": "d", "Đ": "D", "ı": "i", "þ": "th", "Þ": "Th", "ð": "d", "Ð": "D",
})  # fmt: skip


def strip_accents(text: str) -> str:
    """``text`` without accents, ligatures and compatibility forms spelled out: ``Kégl`` ->
    Kegl, ``Œuvre`` -> OEuvre, ``Straße`` -> Strasse, ``ﬁ`` -> fi, ``𝐡`` -> h. Other
    scripts stay whole (Hangul and kana are recomposed)."""
    text = unicodedata.normalize("NFKD", text.translate(_FOLD))
    return unicodedata.normalize("NFC", _COMBINING.sub("", text))
