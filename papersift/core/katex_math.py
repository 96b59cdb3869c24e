"""Where the page's KaTeX auto-render finds math in a text, so that text cut from it (a
search snippet) or marked up (query terms in ``<b>``) can be kept whole where it is math.

Auto-render (``server/static/katex/contrib/auto-render.min.js``, KaTeX 0.19.1, with the
delimiters ``server/static/math.js`` gives it) reads each run of text between elements on
its own: the leftmost opening delimiter (the first listed of those that start there), then
the first closing one after it outside braces, a backslash escaping the next character.
An opening delimiter never closed leaves the rest of the run as text. So a ``<b>`` inside
``$...$`` splits it into two runs each with a lone ``$``, and a lone ``$`` pairs with the
next run's first one: the text between is typeset as one italic formula.

Auto-render takes an escaped dollar outside math (``Raspberry Pi (\\$35)``) for an opening
delimiter all the same; the page shows each as a "$" in an element of its own
(``server.templating.tex_markup``), so it is never one: here it is text.
"""

from __future__ import annotations

import re

# The display environments KaTeX typesets at the top level of a formula (``\\begin{eqnarray}``
# it does not know). Auto-render gives it each whole, ``\\begin`` and ``\\end`` included.
ENVIRONMENTS = ("equation", "equation*", "align", "align*", "gather", "gather*")
# (left, right) as math.js lists them: at a position where two start, the first wins.
DELIMITERS = (
    ("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"),
    *((f"\\begin{{{env}}}", f"\\end{{{env}}}") for env in ENVIRONMENTS),
)  # fmt: skip
_RIGHT = dict(DELIMITERS)
_REACH = max(len(left) for left, _ in DELIMITERS) - 1


def _formula(left: str, right: str, text: str, escape: str) -> str:
    """A whole formula whose braces nest at most one deep (nearly every one): the leftmost
    opening ``left``, then runs of ``text``, escapes (``escape``: a backslash and the
    character it passes over) and brace groups (in which auto-render looks for no closing
    delimiter), then ``right``. Possessive: what does not match as a whole is not retried."""
    group = r"\{(?:[^\\{}]++|\\(?s:.))*+\}"
    return f"{left}(?:{text}|{escape}|{group})*+{right}"


# A dollar escaped outside math: a literal "$", never a delimiter (see above).
ESCAPED_DOLLAR = "\\$"
# Each formula at once (a regex, ~4x faster than a scan in Python on an abstract full of
# them); failing that, an opening delimiter alone (every formula is longer), after which
# ``_closing`` scans as auto-render does; or an escaped dollar, passed over.
_FORMULA = re.compile(
    "|".join(
        (
            re.escape(ESCAPED_DOLLAR),
            _formula(r"\$\$", r"\$\$", r"[^\\{}$]++|\$(?!\$)", r"\\(?s:.)"),
            _formula(r"\\\[", r"\\\]", r"[^\\{}]++", r"\\(?!\])(?s:.)"),
            _formula(r"\$(?!\$)", r"\$", r"[^\\{}$]++", r"\\(?s:.)"),
            _formula(r"\\\(", r"\\\)", r"[^\\{}]++", r"\\(?!\))(?s:.)"),
            # Plain literals, so the regex engine skips to the next $ or backslash quickly.
            *(re.escape(left) for left, _ in DELIMITERS),
        )
    )
)
# Inside math: the closing delimiter (looked at first, as auto-render does), an escaped
# character (passed over with its backslash), or a brace.
_INSIDE = {
    right: re.compile(rf"{re.escape(right)}|\\.|[{{}}]", re.DOTALL) for _, right in DELIMITERS
}


def math_spans(text: str, until: int | None = None) -> list[tuple[int, int]]:
    """The (start, end) of each stretch of ``text`` that auto-render would typeset as math,
    delimiters included, in order; only those starting before ``until`` when given. After
    an opening delimiter that is never closed, auto-render shows the rest as text; the
    spans found after it are listed all the same, as a run that starts past it (a
    snippet, the text after a mark) has them."""
    spans: list[tuple[int, int]] = []
    at = 0
    until = len(text) if until is None else until
    while True:
        # A delimiter starting just before ``until`` is seen whole.
        for found in _FORMULA.finditer(text, at, until + _REACH):
            start, end = found.span()
            if start >= until:
                return spans
            if found.group() == ESCAPED_DOLLAR:
                continue
            if found.group() not in _RIGHT:  # a whole formula
                spans.append((start, end))
                continue
            right = _RIGHT[found.group()]
            closed = _closing(text, right, end)
            if closed >= 0:
                spans.append((start, closed + len(right)))
            at = closed + len(right) if closed >= 0 else end
            break  # go on from there
        else:
            return spans


def _closing(text: str, right: str, at: int) -> int:
    """Where ``right`` closes math that starts at ``at`` (outside braces), or -1."""
    depth = 0
    for token in _INSIDE[right].finditer(text, at):
        piece = token.group()
        if piece == right:
            if depth <= 0:
                return token.start()
        elif piece == "{":
            depth += 1
        elif piece == "}":
            depth -= 1
    return -1
