"""The paper page's neighbourhood graph as server-rendered SVG (no JavaScript): the paper in
the middle, its neighbours (``engine.neighbourhood``) in two arcs with their titles pointing
outwards, sized by citations, coloured by year (with a legend), each a link to its page.

Labels cannot collide: each arc's nodes are at least a row apart vertically, every label
is one line on the outer side of its node, and the margins hold the longest label. The
``viewBox`` lets the stylesheet scale it to the column.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from markupsafe import Markup

from papersift.core.paper import Paper
from papersift.engine.neighbourhood import Neighbour, Neighbourhood
from papersift.server.svg import CHAR_WIDTH, FONT, ROW

LABEL_CHARS = 30  # longer titles are cut with an ellipsis (the node's tooltip has it whole)
MAX_RADIUS = 11.0
MIN_RADIUS = 4.0
LEGEND = 34  # height of the legend band under the arcs
# Oldest to newest (a colour-blind-safe sequential ramp, viridis' stops).
YEAR_COLOURS = ("#440154", "#3b528b", "#21918c", "#5ec962", "#b8a100")


def short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= LABEL_CHARS else title[: LABEL_CHARS - 1].rstrip() + "…"


def year_bins(years: Sequence[int]) -> list[tuple[int, int]]:
    """Up to five consecutive year ranges covering ``years``, oldest first."""
    lo, hi = min(years), max(years)
    n = min(len(YEAR_COLOURS), hi - lo + 1)
    step = (hi - lo + 1) / n
    edges = [lo + round(i * step) for i in range(n)] + [hi + 1]
    return [(edges[i], edges[i + 1] - 1) for i in range(n)]


def _bin(year: int, bins: Sequence[tuple[int, int]]) -> int:
    return next(i for i, (a, b) in enumerate(bins) if a <= year <= b)


def radius(citations: int | None, most: int) -> float:
    """Area grows with the citation count (square root), unknown counts smallest."""
    if not citations or most <= 0:
        return MIN_RADIUS
    return MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * math.sqrt(citations / most)


def relation(n: Neighbour) -> str:
    """What ties a neighbour to the paper, in words."""
    parts = []
    if n.coupling:
        parts.append(f"{n.coupling} shared reference{'s' if n.coupling != 1 else ''}")
    if n.cocited:
        parts.append(f"cited together {n.cocited} time{'s' if n.cocited != 1 else ''}")
    if n.similarity is not None:
        parts.append(f"similarity {n.similarity:.2f}")
    return ", ".join(parts)


def neighbourhood_svg(hood: Neighbourhood, href: Callable[[Paper], str]) -> Markup:
    """The graph, or nothing when there is no neighbour to draw."""
    shown = list(hood.neighbours)
    if not shown:
        return Markup("")
    width = 720
    right, left = shown[0::2], shown[1::2]
    rows = max(len(right), len(left))
    step = max(ROW * 1.6, 2 * MAX_RADIUS + 4)
    arcs = max(180.0, (rows - 1) * step + 2 * MAX_RADIUS + 24)
    height = arcs + LEGEND
    margin = LABEL_CHARS * CHAR_WIDTH + MAX_RADIUS + 10
    cx, cy = width / 2, arcs / 2
    rx, ry = cx - margin, (rows - 1) * step / 2
    pos: dict[int, tuple[float, float]] = {}
    for side, group in ((1, right), (-1, left)):
        for i, n in enumerate(group):
            y = cy - ry + i * step if len(group) > 1 else cy
            dy = (y - cy) / ry if ry else 0.0
            pos[id(n)] = (cx + side * rx * math.sqrt(max(0.0, 1 - 0.75 * dy * dy)), y)
    papers = [hood.paper, *(n.paper for n in shown)]
    bins = year_bins([p.published.year for p in papers])
    most = max((p.citation_count or 0) for p in papers)
    top = max((n.coupling + n.cocited) for n in shown) or 1
    title = f"Papers near “{short(hood.paper.title)}”"
    desc = (
        f"{hood.by_graph} paper{'s' if hood.by_graph != 1 else ''} linked by shared references "
        f"or citations, {hood.by_meaning} by similar text; circles are sized by citations and "
        "coloured by year of publication."
    )
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="neighbourhood" '
        f'viewBox="0 0 {width} {height:.0f}" preserveAspectRatio="xMidYMid meet" '
        f'role="group" aria-labelledby="nbh-title nbh-desc">'
        f'<title id="nbh-title">{escape(title)}</title><desc id="nbh-desc">{escape(desc)}</desc>'
    ]
    for n in shown:
        x, y = pos[id(n)]
        strength = n.coupling + n.cocited
        cls = "spoke" if n.by_graph else "spoke meaning"
        dash = "" if n.by_graph else ' stroke-dasharray="4 3"'
        parts.append(
            f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{x:.1f}" y2="{y:.1f}" class="{cls}" '
            f'stroke="#7fa3cc" stroke-width="{0.8 + 2.6 * strength / top:.1f}"{dash}/>'
        )
    for n in shown:
        x, y = pos[id(n)]
        p = n.paper
        r = radius(p.citation_count, most)
        band = _bin(p.published.year, bins)
        outward = x >= cx
        cites = "" if p.citation_count is None else f", {p.citation_count} citations"
        tip = f"{p.title} ({p.published.year}{cites}): {relation(n)}"
        parts.append(
            f'<a href="{escape(href(p))}"><title>{escape(tip)}</title>'
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" class="node y{band}" '
            f'fill="{YEAR_COLOURS[band]}"/>'
            f'<text x="{x + (r + 5 if outward else -r - 5):.1f}" y="{y + FONT / 3:.1f}" '
            f'text-anchor="{"start" if outward else "end"}" font-size="{FONT}" fill="#222" '
            f'class="label">{escape(short(p.title))}</text></a>'
        )
    me = hood.paper
    band = _bin(me.published.year, bins)
    parts.append(
        f'<g class="centre"><title>{escape("This paper: " + me.title)}</title>'
        f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius(me.citation_count, most) + 3:.1f}" '
        f'class="node centre y{band}" fill="{YEAR_COLOURS[band]}" stroke="#b5452f" '
        f'stroke-width="3"/></g>'
    )
    parts.append(_legend(bins, width, arcs))
    parts.append("</svg>")
    return Markup("".join(parts))


def _legend(bins: Sequence[tuple[int, int]], width: int, top: float) -> str:
    """The year colours, left to right, oldest first, under the arcs."""
    cell = min(120.0, width / len(bins))
    x0 = (width - cell * len(bins)) / 2
    out = ['<g class="legend" aria-label="Year of publication">']
    for i, (a, b) in enumerate(bins):
        x = x0 + i * cell
        label = str(a) if a == b else f"{a}–{b}"
        out.append(
            f'<circle cx="{x + 8:.1f}" cy="{top + 14:.1f}" r="5" class="node y{i}" '
            f'fill="{YEAR_COLOURS[i]}"/><text x="{x + 17:.1f}" y="{top + 18:.1f}" '
            f'font-size="{FONT - 1}" fill="#444" class="legend-label">{escape(label)}</text>'
        )
    out.append("</g>")
    return "".join(out)
