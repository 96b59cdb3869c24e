"""Hyphenated words in relevance order at 663k papers of every field: totals, facets, ranks.

    .venv/bin/python bench/hyphen_scale.py [--size 0] [--write]

With each part of a hyphenated word enough, "SARS-CoV-2" matched 116,461 papers at 663k
(any paper holding "2"), its category facet led by cs.CV, and a paper holding the word
ranked 185th. Since session 35 a match that must hold the word holds every part, and the
parts together where one is a number or a letter or two (``engine.hyphens``). This runs the
queries below in keyword mode, relevance order, before (each part enough: ``holds`` swapped
for the parts' own query in this process) and now, and prints per query the total, the top
category facet, how many of the first ``TOP`` write the word (its parts with a hyphen, a
space or nothing between) and the rank of the first that does. Keyword mode only: the
scale directory's vectors are synthetic.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import bench_config, publish, run_heading, scale_parser, table
from papersift.engine import hyphens
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine

TOP = 30
# The review's three, then fifteen written on 2026-12-07 at 14:08 UTC, before any was run.
QUERIES = (
    "SARS-CoV-2", "GPT-4", "Yang-Mills", "COVID-19", "h-index", "Bose-Einstein condensate",
    "x-ray binaries", "fine-tuning", "Kaluza-Klein", "Navier-Stokes equations",
    "state-of-the-art", "k-means clustering", "e-commerce", "Hartree-Fock", "Reed-Solomon codes",
    "p-adic", "t-SNE", "3-manifolds",
)  # fmt: skip


def written(query: str) -> re.Pattern[str]:
    """The query's hyphenated word as papers write it: its parts joined by a hyphen, a
    space or nothing."""
    word = next(w for w in query.split() if "-" in w)
    return re.compile(r"[\s\-]?".join(re.escape(p) for p in word.split("-")), re.IGNORECASE)


def run(size: int) -> dict[str, tuple[int, str, int, int | None, float]]:
    """query -> (total, top category facet, of the first TOP how many write the word, the
    rank of the first that does, ms of thread CPU)."""
    out = {}
    with open_engine(bench_config(scale_data.data_path(size))) as engine:
        for query in QUERIES:
            request = SearchRequest(query, mode="keyword", page_size=TOP)
            engine.search(request)
            t = time.thread_time()
            result = engine.search(request)
            ms = (time.thread_time() - t) * 1000
            pattern = written(query)
            held = [
                bool(pattern.search(f"{h.paper.title} {h.paper.abstract}")) for h in result.hits
            ]
            first = None
            for page in range(1, 21):  # the first that writes it, within 2,000
                if first is not None:
                    break
                more = engine.search(SearchRequest(query, mode="keyword", page=page, page_size=100))
                for i, h in enumerate(more.hits):
                    if pattern.search(f"{h.paper.title} {h.paper.abstract}"):
                        first = (page - 1) * 100 + i + 1
                        break
                if page >= more.pages:
                    break
            cats = result.facets.get("categories", [])
            top = f"{cats[0].value} {cats[0].count:,}" if cats else "-"
            out[query] = (result.total, top, sum(held), first, ms)
    return out


def report(size: int) -> tuple[str, str]:
    now = run(size)
    rule = hyphens.holds
    hyphens.holds = lambda lex, parts, scored: scored  # each part enough, as before
    try:
        before = run(size)
    finally:
        hyphens.holds = rule
    rows = []
    for q in QUERIES:
        b, n = before[q], now[q]
        rows.append([
            q, f"{b[0]:,} -> {n[0]:,}", f"{b[1]} -> {n[1]}", f"{b[2]} -> {n[2]}",
            f"{b[3] or '-'} -> {n[3] or '-'}",
        ])  # fmt: skip
    head = [
        "query", "total, before -> now", "top category facet", f"of the first {TOP}, write it",
        "first that writes it",
    ]  # fmt: skip
    ms_b = sorted(v[4] for v in before.values())[len(QUERIES) // 2]
    ms_n = sorted(v[4] for v in now.values())[len(QUERIES) // 2]
    held_b, held_n = sum(v[2] for v in before.values()), sum(v[2] for v in now.values())
    summary = (
        f"of the first {TOP} of {len(QUERIES)} queries, {held_b} -> {held_n} write the word; "
        f"thread CPU per search, median {ms_b:.1f} -> {ms_n:.1f} ms"
    )
    return table(head, rows), summary


def main() -> None:
    args = scale_parser(__doc__, queries=None, rounds=1).parse_args()
    body, summary = report(args.size)
    text = (
        f"{run_heading('hyphen_scale.py')}: scale directory size "
        f"{args.size} (0: all), keyword mode, relevance order; {summary}.\n\n{body}"
    )
    publish("hyphen-scale", text, args.write)


if __name__ == "__main__":
    main()
