"""Snippets whose TeX the page can typeset: no highlight inside math, no formula cut in two.

Tantivy marks query terms token by token and cuts a snippet where its tokens fall, blind to
TeX. In ``We also define the $h'_\\alpha$ index`` it marked ``h`` and ``alpha`` inside the
formula, and a fragment may start or end inside one; either leaves a lone ``$`` to KaTeX's
auto-render, which then typesets the text up to the next ``$`` as one italic formula
(``core.katex_math``). So, after Tantivy (or ``engine.highlight``) has made a snippet:

- a mark inside math marks the whole formula instead (``<b>$h'_\\alpha$</b>``);
- a mark inside a TeX command outside math (``h{\\alpha}``, arXiv's form of "hα") marks
  the command, with its braces when they hold only it (``<b>{\\alpha}</b>``): the page
  decodes it to a letter, and a mark inside would split it;
- a snippet's edge inside a formula moves out to the formula's edge, or, for a formula over
  ``WHOLE`` characters, in past it;
- a plain excerpt (no query term) is cut likewise.

The API's ``snippet_html`` and the page show the same snippet. Text without ``$`` or a
backslash (most) is passed through as made.
"""

from __future__ import annotations

import html
import re

from papersift.core.katex_math import math_spans

# A formula cut by a snippet's edge is shown whole when it is at most this long, else left
# out: a snippet is about 300 characters, and a long one would push the terms out of view.
WHOLE = 150
_MARK = re.compile(r"(</?b>)")

Span = tuple[int, int]


def typesettable(snippet: str, text: str) -> str:
    """``snippet`` (escaped ``text``, or a stretch of it, with ``<b>`` marks: Tantivy's
    ``to_html``) with its marks and edges out of the math of ``text`` (see above)."""
    if "$" not in text and "\\" not in text:
        return snippet
    if "$" not in snippet and "\\" not in snippet:
        # No delimiter or command to split, and no lone "$" to leave at an edge (a snippet
        # wholly inside a formula longer than itself shows as the plain text it is): as
        # made. 492 of the 1,598 snippets of TeX abstracts in 200 keyword searches at 663k.
        return snippet
    shown: list[str] = []
    marks: list[Span] = []
    at = opened = 0
    for piece in _MARK.split(snippet):
        if piece == "<b>":
            opened = at
        elif piece == "</b>":
            marks.append((opened, at))
        elif piece:
            shown.append(html.unescape(piece))
            at += len(shown[-1])
    plain = "".join(shown)
    offset = text.find(plain)
    if offset < 0:  # cannot happen: a snippet is a stretch of its text
        return snippet
    spans = math_spans(text, offset + len(plain))  # those after the snippet do not matter
    start, stop = window(spans, offset, offset + len(plain))
    marked = _marks(text, [(a + offset, b + offset) for a, b in marks], spans, start, stop)
    out: list[str] = []
    at = start
    for a, b in marked:
        out += (html.escape(text[at:a]), "<b>", html.escape(text[a:b]), "</b>")
        at = b
    out.append(html.escape(text[at:stop]))
    return "".join(out)


def excerpt(text: str, size: int) -> str:
    """The start of ``text`` cut at a space by ``size`` characters, "…" after a cut, as
    plain text (not escaped); a formula under the cut is kept whole or left out."""
    if len(text) <= size:
        return text
    stop = len(text[:size].rsplit(" ", 1)[0])
    if "$" in text or "\\" in text:
        stop = window(math_spans(text, stop), 0, stop)[1]
    return text[:stop].rstrip() + " …"


def window(spans: list[Span], start: int, stop: int) -> Span:
    """``start`` and ``stop`` moved off any formula of ``spans`` they fall inside: out to
    its edge when it is at most ``WHOLE`` long, else in past it. A window inside one long
    formula becomes that formula."""
    first, last = start, stop
    for a, b in spans:
        if a >= last:
            break
        if a < start < b:
            first = a if b - a <= WHOLE else b
        if a < stop < b:
            last = b if b - a <= WHOLE else a
    if first >= last:  # within one long formula: show it
        return next((a, b) for a, b in spans if a <= start < b)
    return first, last


def _marks(text: str, marks: list[Span], spans: list[Span], start: int, stop: int) -> list[Span]:
    """``marks`` (offsets in ``text``) widened to the formula or TeX command each falls in,
    those outside ``start``-``stop`` dropped, overlapping or touching ones merged."""
    out: list[Span] = []
    formulas = iter(spans)
    formula = next(formulas, None)
    for a, b in marks:
        while formula is not None and formula[1] <= a:
            formula = next(formulas, None)
        if formula is not None and formula[0] < b:  # the mark overlaps it
            a, b = formula
        elif _in_command(text, a):
            a -= 1
            if text[a - 1 : a] == "{" and text[b : b + 1] == "}":  # {\alpha}
                a, b = a - 1, b + 1
        if a < start or b > stop:  # a formula left out at an edge
            continue
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(b, out[-1][1]))
        else:
            out.append((a, b))
    return out


def _in_command(text: str, at: int) -> bool:
    """Whether the token at ``at`` is a TeX command's name: a letter after an odd number
    of backslashes (after an even number, the backslashes are a line break)."""
    slashes = 0
    while at - slashes > 0 and text[at - slashes - 1] == "\\":
        slashes += 1
    return slashes % 2 == 1 and text[at].isalpha()
