"""Where the page's KaTeX auto-render finds math in a text, so that text cut from it (a
search snippet) or marked up (query terms in ``<b>``) can be kept whole where it is math.

Auto-render (``server/static/katex/contrib/auto-render.min.js``, KaTeX 0.19.1, with the
delimiters ``server/static/math.js`` gives it) reads each run of text between elements on
its own: the leftmost opening delimiter (the first listed of those that start there), then
the first closing one after it outside braces, a backslash escaping the next character.
An opening delimiter never closed leaves the rest of the run as text. So a ``<b>`` inside
``$...$`` splits it into two runs each with a lone ``$``, and a lone ``$`` pairs with the
next run's first one: the text between is typeset as one italic formula.
"""

from __future__ import annotations

import re

# (left, right) as math.js lists them: at a position where two start, the first wins.
DELIMITERS = (("$$", "$$"), ("\\[", "\\]"), ("$", "$"), ("\\(", "\\)"))
_RIGHT = dict(DELIMITERS)
_LEFT = re.compile("|".join(re.escape(left) for left, _ in DELIMITERS))  # in order: $$ first
# Inside math: the closing delimiter (looked at first, as auto-render does), an escaped
# character (passed over with its backslash), or a brace.
_INSIDE = {
    right: re.compile(rf"{re.escape(right)}|\\.|[{{}}]", re.DOTALL) for _, right in DELIMITERS
}


def math_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each stretch of ``text`` that auto-render would typeset as math,
    delimiters included, in order. After an opening delimiter that is never closed,
    auto-render shows the rest as text; the spans found after it are listed all the same,
    as a run that starts past it (a snippet, the text after a mark) has them."""
    spans = []
    at = 0
    while found := _LEFT.search(text, at):
        left = found.group()
        right = _RIGHT[left]
        end = _closing(text, right, found.end())
        if end < 0:
            at = found.end()
            continue
        spans.append((found.start(), end + len(right)))
        at = end + len(right)
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
