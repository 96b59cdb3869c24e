"""Server-rendered SVG charts (no JavaScript): a bar chart and a co-author network.

Both carry a ``viewBox`` and no fixed width, so the stylesheet scales them to the column
(``width: 100%``); colours are classes the stylesheet sets, with fill attributes as the
fallback for a viewer without it (an SVG opened on its own).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup

FONT = 12  # label size in viewBox units
CHAR_WIDTH = 0.62 * FONT  # a generous average advance of system sans-serif glyphs
LABEL_CHARS = 22  # longer co-author names are cut with an ellipsis (the title has it whole)
ROW = FONT + 6  # least vertical distance between two labels on the same side
GRAPH_NODES = 24  # co-authors drawn; the list under the graph has them all


@dataclass(frozen=True, slots=True)
class Bar:
    label: str
    value: int
    href: str = ""


@dataclass(frozen=True, slots=True)
class Node:
    key: int
    label: str
    weight: int  # shared papers with the centre (0 for the centre itself)
    href: str = ""


def _a(href: str, inner: str, title: str) -> str:
    body = f"<title>{escape(title)}</title>{inner}"
    return f'<a href="{escape(href)}">{body}</a>' if href else f"<g>{body}</g>"


def _open(cls: str, width: float, height: float, title: str) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{cls}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" preserveAspectRatio="xMidYMid meet" '
        # A group, not role="img": an image may not hold the links to the bars and people.
        f'role="group" aria-label="{escape(title)}"><title>{escape(title)}</title>'
    )


def bar_chart(bars: Sequence[Bar], title: str, width: int = 560, height: int = 160) -> Markup:
    """Vertical bars with labels under them; every bar links where ``href`` says."""
    if not bars:
        return Markup("")
    top = max(b.value for b in bars) or 1
    pad, base = 4, height - 24
    step = (width - 2 * pad) / len(bars)
    bw = max(2.0, step * 0.8)
    widest = max(label_width(b.label) for b in bars) + 6
    every = max(1, math.ceil(widest / step))  # keep the labels under the bars apart
    show_values = step >= 3 * CHAR_WIDTH  # a value over every bar only when it fits
    parts = [_open("chart", width, height, title)]
    for i, b in enumerate(bars):
        x = pad + i * step + (step - bw) / 2
        h = (base - 16) * b.value / top
        rect = (
            f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
            f'rx="1.5" class="bar" fill="#2f5f98"/>'
        )
        if show_values and b.value:
            rect += (
                f'<text x="{x + bw / 2:.1f}" y="{base - h - 4:.1f}" text-anchor="middle" '
                f'font-size="{FONT - 1}" fill="#444" class="value">{b.value}</text>'
            )
        parts.append(_a(b.href, rect, f"{b.label}: {b.value}"))
        if i % every == 0:
            parts.append(
                f'<text x="{x + bw / 2:.1f}" y="{height - 6}" text-anchor="middle" '
                f'font-size="{FONT}" fill="#444" class="label">{escape(b.label)}</text>'
            )
    parts.append(f'<line x1="0" y1="{base}" x2="{width}" y2="{base}" class="axis" stroke="#999"/>')
    parts.append("</svg>")
    return Markup("".join(parts))


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1].rstrip() + "…"


def label_width(text: str) -> float:
    """Estimated width of a label in viewBox units (the layout's collision margin)."""
    return len(text) * CHAR_WIDTH


def _column(n: int, top: float, bottom: float) -> list[float]:
    """``n`` heights spread evenly over [top, bottom] (the middle when n is 1)."""
    if n == 1:
        return [(top + bottom) / 2]
    return [top + (bottom - top) * i / (n - 1) for i in range(n)]


def network(
    centre: Node,
    others: Sequence[Node],
    edges: Sequence[tuple[int, int, int]],
    title: str,
    width: int = 680,
) -> Markup:
    """The centre in the middle, co-authors in two arcs left and right of it with their
    names pointing outwards, so no label crosses another or the centre (names on one side
    are at least ``ROW`` apart). Line width grows with shared papers; ``edges`` are (key,
    key, shared papers) between co-authors. At most ``GRAPH_NODES`` co-authors, most
    shared papers first, alternating sides so both arcs hold the strongest ties."""
    shown = list(others[:GRAPH_NODES])
    if not shown:
        return Markup("")
    right, left = shown[0::2], shown[1::2]
    rows = max(len(right), len(left))
    height = max(200, rows * ROW * 1.6 + 40)
    margin = LABEL_CHARS * CHAR_WIDTH + 14  # room for the longest label outside each arc
    cx, cy = width / 2, height / 2
    rx, ry = cx - margin, height / 2 - 20
    pos: dict[int, tuple[float, float]] = {centre.key: (cx, cy)}
    for side, group in ((1, right), (-1, left)):
        for n, y in zip(group, _column(len(group), cy - ry, cy + ry), strict=True):
            # On the ellipse at this height, pulled in a little at the ends of a short arc.
            dy = (y - cy) / ry if ry else 0.0
            pos[n.key] = (cx + side * rx * math.sqrt(max(0.0, 1 - 0.75 * dy * dy)), y)
    top = max(n.weight for n in shown) or 1
    parts = [_open("network", width, height, title)]
    lines = [(centre.key, n.key, n.weight) for n in shown]
    lines += [e for e in edges if e[0] in pos and e[1] in pos and centre.key not in e[:2]]
    for a, b, w in lines:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        cls = "spoke" if centre.key in (a, b) else "edge"
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" class="{cls}" '
            f'stroke="{"#7fa3cc" if cls == "spoke" else "#c8c8c8"}" '
            f'stroke-width="{0.8 + 2.6 * w / top:.1f}"/>'
        )
    for n in shown:
        x, y = pos[n.key]
        r = 3.5 + 3.5 * n.weight / top
        outward = x >= cx
        shared = f" ({n.weight} shared paper{'s' if n.weight != 1 else ''})"
        inner = (
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" class="node" fill="#2f5f98"/>'
            f'<text x="{x + (r + 5 if outward else -r - 5):.1f}" y="{y + FONT / 3:.1f}" '
            f'text-anchor="{"start" if outward else "end"}" font-size="{FONT}" fill="#222" '
            f'class="name">{escape(_short(n.label))}</text>'
        )
        parts.append(_a(n.href, inner, n.label + shared))
    # The centre last, over the spokes; its name is the page's heading, so only initials.
    initials = "".join(w[0] for w in centre.label.split()[:3] if w[:1].isalpha()).upper()
    parts.append(
        f'<g class="centre"><title>{escape(centre.label)}</title>'
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="16" class="node centre" fill="#b5452f"/>'
        f'<text x="{cx:.1f}" y="{cy + FONT / 3:.1f}" text-anchor="middle" font-size="{FONT}" '
        f'fill="#fff" class="initials">{escape(initials)}</text></g>'
    )
    parts.append("</svg>")
    return Markup("".join(parts))
