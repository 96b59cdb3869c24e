"""Server-rendered SVG charts (no JavaScript): a bar chart and a co-author network."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from markupsafe import Markup


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


def bar_chart(bars: Sequence[Bar], title: str, width: int = 560, height: int = 160) -> Markup:
    """Vertical bars with labels under them; every bar links where ``href`` says."""
    if not bars:
        return Markup("")
    top = max(b.value for b in bars) or 1
    pad, base = 4, height - 24
    step = (width - 2 * pad) / len(bars)
    bw = max(2.0, step * 0.8)
    every = max(1, math.ceil(len(bars) / 14))  # keep labels from overlapping
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" '
        f'viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    for i, b in enumerate(bars):
        x = pad + i * step + (step - bw) / 2
        h = (base - 14) * b.value / top
        rect = (
            f'<rect x="{x:.1f}" y="{base - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
            f'class="bar" fill="#3b6ea5"/><text x="{x + bw / 2:.1f}" y="{base - h - 3:.1f}" '
            f'text-anchor="middle" font-size="10" fill="#333" class="value">{b.value}</text>'
        )
        parts.append(_a(b.href, rect, f"{b.label}: {b.value}"))
        if i % every == 0:
            parts.append(
                f'<text x="{x + bw / 2:.1f}" y="{height - 8}" text-anchor="middle" '
                f'font-size="11" fill="#333" class="label">{escape(b.label)}</text>'
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def network(
    centre: Node,
    others: Sequence[Node],
    edges: Sequence[tuple[int, int, int]],
    title: str,
    width: int = 760,
    height: int = 460,
) -> Markup:
    """The centre in the middle, co-authors on an ellipse; line width grows with shared
    papers. ``edges`` are (key, key, shared papers) between co-authors."""
    if not others:
        return Markup("")
    cx, cy = width / 2, height / 2
    rx, ry = width / 2 - 170, height / 2 - 30  # room for the labels left and right
    pos: dict[int, tuple[float, float]] = {centre.key: (cx, cy)}
    for i, n in enumerate(others):
        angle = 2 * math.pi * i / len(others) - math.pi / 2
        pos[n.key] = (cx + rx * math.cos(angle), cy + ry * math.sin(angle))
    top = max(n.weight for n in others) or 1
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="network" width="{width}" '
        f'viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{escape(title)}"><title>{escape(title)}</title>'
    ]
    lines = [(centre.key, n.key, n.weight) for n in others]
    lines += [e for e in edges if e[0] in pos and e[1] in pos]
    for a, b, w in lines:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        stroke = 0.8 + 3.2 * w / top
        cls = "spoke" if centre.key in (a, b) else "edge"
        parts.append(
            f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" class="{cls}" '
            f'stroke="{"#3b6ea5" if cls == "spoke" else "#bbb"}" stroke-width="{stroke:.1f}"/>'
        )
    for n in (centre, *others):
        x, y = pos[n.key]
        r = 9 if n is centre else 4 + 4 * n.weight / top
        anchor = "middle" if n is centre else ("start" if x >= cx else "end")
        dx = 0 if n is centre else (r + 3 if x >= cx else -r - 3)
        dy = -r - 4 if n is centre else 4
        shared = "" if n is centre else f" ({n.weight} shared paper{'s' if n.weight != 1 else ''})"
        fill = "#c0392b" if n is centre else "#3b6ea5"
        inner = (
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" class="node" fill="{fill}"/>'
            f'<text x="{x + dx:.1f}" y="{y + dy:.1f}" text-anchor="{anchor}" font-size="11" '
            f'fill="#222">'
            f"{escape(n.label)}</text>"
        )
        parts.append(_a(n.href, inner, n.label + shared))
    parts.append("</svg>")
    return Markup("".join(parts))
