"""TeX in titles and abstracts as text: Unicode for HTML (math left to KaTeX), plain text,
or the ASCII words that slugs and citation keys are made of."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

from pylatexenc import latexwalker
from pylatexenc.latex2text import LatexNodes2Text, MacroTextSpec, get_default_latex_context_db
from pylatexenc.latexwalker import LatexMacroNode
from pylatexenc.macrospec import std_macro

from papersift.core.accents import accented, strip_accents
from papersift.core.katex_math import DELIMITERS, ESCAPED_DOLLAR, math_spans

_ESCAPES = {
    r"\%": "%",
    r"\&": "&",
    r"\_": "_",
    r"\#": "#",
    r"\$": "$",
    "~": " ",
    "``": '"',
    "''": '"',
}
# Font and box commands pylatexenc 2.11 parses with their argument but has no text for, so
# the argument was dropped ("split of \\textsf{FOLIO} and" -> "split of  and"): their text.
KEEP_ARGUMENT = ("texttt", "textsf", "textup", "textmd", "mbox")


def _argument(node: LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    args = node.nodeargd.argnlist if node.nodeargd is not None else []
    return str(l2tobj.nodelist_to_text([args[0]])) if args and args[0] is not None else ""


# Switches of font, size and spacing that pylatexenc does not know and that have no text of
# their own ("{\\it topic}" is "topic"). Any other macro it does not know is an author's own
# (``\\sm`` for "sigma model", ``\\DeAR`` for a system's name): shown as written, as arXiv
# shows it, where dropping it left "a non-linear ." and "DeepAgentRank ()".
SWITCHES = (
    "it", "bf", "em", "sc", "sl", "rm", "tt", "sf", "cal", "frak", "up", "md", "bfseries",
    "itshape", "scshape", "slshape", "upshape", "mdseries", "rmfamily", "sffamily",
    "ttfamily", "normalfont", "tiny", "scriptsize", "footnotesize", "small", "normalsize",
    "large", "Large", "LARGE", "huge", "Huge", "xspace", "linebreak", "newline", "noindent",
    "hfill", "vfill", "hphantom", "vphantom", "phantom", "big", "Big", "bigg", "Bigg",
    "left", "right", "displaystyle", "textstyle", "nolinebreak", "allowbreak", "relax",
)  # fmt: skip


# Text macros pylatexenc 2.11 does not know, with how many arguments: their text, where an
# unknown macro is shown as written ("Yb\\textsuperscript+"): siunitx's quantities in physics
# abstracts ("\\SI{1000}{G/cm}" -> "1000 G/cm", "\\num{2e-13}"), mhchem's formulas
# ("\\ce{Na+}" -> "Na+") and super- and subscripts.
PARSED = {"textsuperscript": 1, "textsubscript": 1, "num": 1, "si": 1, "SI": 2, "ce": 1}


def _arguments(node: LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    args = node.nodeargd.argnlist if node.nodeargd is not None else []
    return " ".join(str(l2tobj.nodelist_to_text([a])) for a in args if a is not None)


def _walker_context() -> object:
    db = latexwalker.get_default_latex_context_db()
    specs = [std_macro(name, False, n) for name, n in PARSED.items()]
    db.add_context_category("papersift-parsed", macros=specs, prepend=True)
    return db


def _context() -> object:
    db = get_default_latex_context_db()
    keep = [MacroTextSpec(name, simplify_repl=_arguments) for name in PARSED]
    keep += [MacroTextSpec(name, simplify_repl=_argument) for name in KEEP_ARGUMENT]
    db.add_context_category("papersift-keep-argument", macros=keep, prepend=True)
    switches = [MacroTextSpec(name, discard=True) for name in SWITCHES]
    db.add_context_category("papersift-switches", macros=switches, prepend=True)
    db.set_unknown_macro_spec(MacroTextSpec("", simplify_repl=_as_written))
    return db


def _as_written(node: LatexMacroNode, l2tobj: LatexNodes2Text) -> str:
    """An unknown macro as its source (its arguments, if the parser took any, as text)."""
    return f"\\{node.macroname}{node.macro_post_space}"


_latex = LatexNodes2Text(math_mode="text", latex_context=_context())
# The parser's macro table, built once: without it each parse builds its own, a quarter of
# the time of a call. Parsing only reads it (safe across threads).
_PARSE = {"latex_context": _walker_context()}
_TEX_TEXT = re.compile(r"[\\{}]")  # what pylatexenc has work to do on outside math
_BARE_SPECIAL = re.compile(r"(?<!\\)([%&#])")  # a comment, a table cell: literal in titles
# An escaped dollar outside math while the text is decoded: NUL, which no text may hold.
_DOLLAR = "\x00"


def _math_text(tex: str) -> str:
    try:
        return str(_latex.latex_to_text(tex, **_PARSE)).strip()
    except Exception:  # pylatexenc is lenient, but a description must never fail a page
        return tex


@lru_cache(maxsize=8192)
def _text_mode(part: str) -> str:
    """Accents, ``\\textsc{}``, ``{\\alpha}`` and braces outside math as Unicode text; each
    escaped dollar as ``_DOLLAR``. A bare "$" here opens math that is never closed, which the
    page shows as text: kept (the parser would read the rest as math and drop it)."""
    if not _TEX_TEXT.search(part):
        return part
    guarded = part.replace(ESCAPED_DOLLAR, _DOLLAR).replace("$", ESCAPED_DOLLAR)
    guarded = _BARE_SPECIAL.sub(r"\\\1", guarded)
    try:
        out = str(_latex.latex_to_text(guarded, **_PARSE))
    except Exception:  # lenient, not total: the raw text is better than no page
        return part.replace(ESCAPED_DOLLAR, _DOLLAR)
    # Keep the spaces at the edges: the part sits between two math spans.
    lead = " " if part[:1].isspace() else ""
    trail = " " if part[-1:].isspace() else ""
    return lead + " ".join(out.split()) + trail


def _parts(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into its stretches of math, as the page's KaTeX finds them
    (``core.katex_math``: an escaped dollar outside math is text), and of text."""
    out: list[tuple[str, bool]] = []
    at = 0
    for start, end in math_spans(text):
        out += [(text[at:start], False), (text[start:end], True)]
        at = end
    out.append((text[at:], False))
    return [(part, math) for part, math in out if part]


def tex_runs(text: str) -> list[str]:
    """A title or abstract for HTML: TeX outside math (``Rozw\\'oj``, ``h{\\alpha}``,
    ``\\textsc{DiARC}``) decoded to Unicode; math kept as written for KaTeX to typeset in
    the browser; cut at each escaped dollar outside math (``Pi (\\$35)``), which the page
    shows as a "$" between two runs where KaTeX cannot take it for a delimiter."""
    text = text.replace(_DOLLAR, "")
    if not _TEX_TEXT.search(text):
        return [text]
    decoded = "".join(part if math else _text_mode(part) for part, math in _parts(text))
    return decoded.split(_DOLLAR)


def tex_text(text: str) -> str:
    """:func:`tex_runs` as one text, an escaped dollar outside math as "$"."""
    return "$".join(tex_runs(text))


def _math_inside(formula: str) -> str:
    """A formula without its delimiters."""
    for left, right in DELIMITERS:
        if formula.startswith(left) and formula.endswith(right):
            return formula[len(left) : len(formula) - len(right)]
    return formula


def plain_text(text: str) -> str:
    """Readable text for meta tags and markdown: TeX math turned into Unicode where simple,
    and TeX outside math (accents, ``\\textsc``) decoded."""
    text = text.replace(_DOLLAR, "")
    parts = _parts(text) if _TEX_TEXT.search(text) or "$" in text else [(text, False)]
    out = "".join(
        _math_text(_math_inside(part)) if math else _text_mode(part) for part, math in parts
    ).replace(_DOLLAR, "$")
    for escape, char in _ESCAPES.items():
        out = out.replace(escape, char)
    return " ".join(out.split())


# A Greek letter on its own ("$\\alpha$-Nets" -> "α-Nets", "hα", "τ-Knowledge"), not one in a
# Greek word: spelled out in ASCII words.
_LONE_GREEK = re.compile(
    r"(?<![\u0370-\u03ff])[\u0391-\u03a9\u03b1-\u03c9\u03d1\u03d5\u03f5](?![\u0370-\u03ff])"
)
_ASCII_WORD = re.compile(r"[a-z0-9]+")


def _greek_name(m: re.Match[str]) -> str:
    words = unicodedata.name(m[0], "").split()  # GREEK SMALL LETTER ALPHA, GREEK PHI SYMBOL
    if not words:  # U+03A2 is unassigned
        return " "
    return f" {words[-2] if words[-1] == 'SYMBOL' else words[-1]} ".lower()


def ascii_words(text: str) -> list[str]:
    """The words of ``text`` in lower-case ASCII, for URL slugs and citation keys: TeX
    accents as letters (``Biblioth\\`eque`` -> bibliotheque), other TeX read as
    :func:`plain_text` reads it (``\\textsc{DiARC}`` -> diarc), accents folded (``Œuvre`` ->
    oeuvre), a lone Greek letter spelled (``$\\alpha$``, ``τ`` -> alpha, tau); what has no
    Latin form is dropped."""
    if "\\" in text:
        # Accents by the index's cheap reader first: a sitemap chunk slugs 50,000 titles,
        # and pylatexenc would take 3x as long as the rest of it. Math needs no reading
        # unless it has commands: "$C^3$-index" -> c, 3, index.
        text = accented(text)
        if "\\" in text:
            text = plain_text(text)
    if not text.isascii():
        text = _LONE_GREEK.sub(_greek_name, strip_accents(text))
    return _ASCII_WORD.findall(text.lower())


def shorten(text: str, limit: int = 200) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(",;:.-") + "…"
