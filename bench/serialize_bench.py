"""Serialisation cost of a search response (issue 20): the dict + orjson path the API had
against the msgspec Struct + msgspec.json path it has now (``server.schemas``).

Real ``Paper`` objects from the bundled demo corpus (``record_to_paper``) make 20- and
100-hit pages; each hit gets a snippet like the engine's (escaped abstract start, a query
word in <b>), ranks and a score; facets as a search returns them. Both paths build the
body from the same ``SearchResult`` and encode it; the outputs are checked byte-identical
first. Timing alternates the two paths (A/B/A/B...) over ``--rounds`` rounds of
``--repeat`` responses each and reports medians and their ratio.

    .venv/bin/python bench/serialize_bench.py [--rounds 15] [--repeat 200] [--write]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, log, machine_info, publish, table
from papersift.core.paper import Paper
from papersift.core.resources import demo_corpus_path
from papersift.core.urls import arxiv_abs, arxiv_pdf, paper_path
from papersift.core.urls import researcher_url as _rurl
from papersift.engine.results import FacetCount, Filters, Hit, SearchRequest, SearchResult
from papersift.indexer.snapshot import record_to_paper
from papersift.server.schemas import search_body

ROOT = "https://papers.example.org"
NEXT = ROOT + "/api/v1/search?q=neural+networks&page=2"


# -- the path before issue 20, kept verbatim as the baseline -------------------------------
def _number(value: float) -> float | None:
    return round(value, 6) if math.isfinite(value) else None


def _old_cli_paper(p: Paper) -> dict[str, Any]:
    return {
        "id": p.arxiv_id,
        "version": p.version,
        "title": p.title,
        "abstract": p.abstract,
        "authors": [a.name for a in p.authors],
        "categories": list(p.categories),
        "published": p.published.isoformat(),
        "updated": p.updated.isoformat(),
        "doi": p.doi,
        "journal_ref": p.journal_ref,
        "comments": p.comments,
        "license": p.license,
        "citation_count": p.citation_count,
    }


def _old_paper(p: Paper, root: str) -> dict[str, Any]:
    return {
        **_old_cli_paper(p),
        "authors": [{"name": a.name, "ids": dict(a.ids)} for a in p.authors],
        "primary_category": p.primary_category,
        "url": root + paper_path(p),
        "abs_url": arxiv_abs(p.arxiv_id),
        "pdf_url": arxiv_pdf(p.arxiv_id),
    }


def _old_hit(h: Hit, root: str) -> dict[str, Any]:
    return {
        "paper": _old_paper(h.paper, root),
        "score": _number(h.score),
        "title_html": h.title_html,
        "snippet_html": h.abstract_html,
        "ranks": dict(h.ranks),
    }


def old_search(result: SearchResult, root: str, nxt: str | None) -> dict[str, Any]:
    req = result.request
    f = req.filters
    return {
        "request": {
            "q": req.query,
            "mode": req.mode,
            "sort": req.sort,
            "page": req.page,
            "page_size": result.page_size,
            "category": list(f.categories),
            "researcher": list(f.researchers),
            "from": f.date_from.isoformat() if f.date_from else None,
            "to": f.date_to.isoformat() if f.date_to else None,
        },
        "mode": result.mode,
        "total": result.total,
        "page": result.page,
        "page_size": result.page_size,
        "pages": result.pages,
        "took_ms": _number(result.took_ms),
        "warnings": list(result.warnings),
        "direct": _old_paper(result.direct, root) if result.direct else None,
        "missing_id": result.missing_id,
        "researchers": [
            {"id": r.rid, "name": r.name, "papers": r.papers, "url": root + _rurl(r.rid, r.name)}
            for r in result.researchers
        ],
        "facets": {
            name: [{"value": v.value, "count": v.count} for v in values]
            for name, values in result.facets.items()
        },
        "hits": [_old_hit(h, root) for h in result.hits],
        "next": nxt,
    }


# -- the data -------------------------------------------------------------------------------
def demo_papers(n: int) -> list[Paper]:
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        return [record_to_paper(json.loads(line)) for _, line in zip(range(n), fh, strict=False)]


def _snippet(text: str, word: str) -> str:
    start = escape(text[:280])
    return start.replace(escape(word), f"<b>{escape(word)}</b>", 1) + "…"


def result_of(papers: list[Paper]) -> SearchResult:
    hits = tuple(
        Hit(p, 0.0325 - i * 1e-4, _snippet(p.title, p.title.split()[0]),
            _snippet(p.abstract, p.abstract.split()[0]), {"keyword": i + 1, "semantic": i + 3})
        for i, p in enumerate(papers)
    )  # fmt: skip
    cats = Counter(c for p in papers for c in p.categories)
    years = Counter(str(p.published.year) for p in papers)
    facets = {
        "categories": tuple(FacetCount(c, n) for c, n in cats.most_common(15)),
        "years": tuple(FacetCount(y, n) for y, n in sorted(years.items(), reverse=True)),
    }
    request = SearchRequest(query="neural networks", filters=Filters(categories=("cs",)))
    return SearchResult(request, "hybrid", hits, 5_214, 1, len(hits), facets, took_ms=12.75)


# -- timing ---------------------------------------------------------------------------------
def old_path(result: SearchResult) -> bytes:
    return orjson.dumps(old_search(result, ROOT, NEXT))


_ENCODER = msgspec.json.Encoder()


def new_path(result: SearchResult) -> bytes:
    return _ENCODER.encode(search_body(result, ROOT, NEXT, {}))


def per_response_us(fn: Callable[[], object], n: int) -> float:
    """CPU time of this process per call (the machine is shared: wall time counts the
    other processes' turns too)."""
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n * 1e6


def measure(hits: int, rounds: int, repeat: int) -> list[str]:
    result = result_of(demo_papers(hits))
    old, new = old_path(result), new_path(result)
    assert old == new, "the two paths must write the same bytes"
    old_body, new_body = old_search(result, ROOT, NEXT), search_body(result, ROOT, NEXT, {})
    paths: dict[str, Callable[[], object]] = {
        "old": lambda: old_path(result),
        "new": lambda: new_path(result),
        "old_build": lambda: old_search(result, ROOT, NEXT),
        "new_build": lambda: search_body(result, ROOT, NEXT, {}),
        "old_encode": lambda: orjson.dumps(old_body),
        "new_encode": lambda: _ENCODER.encode(new_body),
    }
    times: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(3):  # warm up
        old_path(result), new_path(result)
    for i in range(rounds):
        for part in ("", "_build", "_encode"):
            order = ("old", "new") if i % 2 == 0 else ("new", "old")
            for name in (o + part for o in order):
                times[name].append(per_response_us(paths[name], repeat))
    med = {k: statistics.median(v) for k, v in times.items()}
    log(f"{hits} hits: old {med['old']:.0f} us, new {med['new']:.0f} us")
    return [
        str(hits),
        f"{len(new) / 1024:.1f} KiB",
        f"{med['old']:.0f}",
        f"{med['new']:.0f}",
        f"{med['new'] / med['old']:.2f}",
        f"{med['old_build']:.0f} / {med['new_build']:.0f}",
        f"{med['old_encode']:.0f} / {med['new_encode']:.0f}",
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--write", action="store_true", help="write the section into RESULTS.md")
    args = ap.parse_args(argv)
    before = load_average()
    rows = [measure(n, args.rounds, args.repeat) for n in (20, 100)]
    after = load_average()
    info = machine_info()
    headers = ["hits", "body", "old µs", "new µs", "new/old", "build µs (old / new)",
               "encode µs (old / new)"]  # fmt: skip
    body = "\n".join(
        [
            "## Issue 20: response schemas",
            "",
            "One `/api/v1/search` response built and encoded: the dict + orjson path before "
            "issue 20 against the msgspec Struct + `msgspec.json` path now "
            "(`server.schemas.search_body`). Real demo-corpus papers, snippets like the "
            "engine's, two facets; both paths write the same bytes (checked). Medians of "
            f"{args.rounds} alternating rounds of {args.repeat} responses, CPU time of the "
            "process per response; `build` is the body alone, `encode` its encoding alone.",
            "",
            table(headers, rows),
            "",
            "Read: msgspec encodes this body more slowly than orjson (the `encode` column), "
            "but the Structs build faster than the merged dicts did, so the whole response "
            "costs less (`new/old` < 1). Tuned once on these figures: the first Struct "
            "builders passed keywords, and a 17-field Struct built by keyword took ~5x the "
            "time of a positional call here (2.7 vs 0.5 µs, `timeit`), which made the two "
            "paths about even; `paper_body` and `hit_body` now pass fields in order. The "
            "slug of the paper URL (`core.urls.slug`) is most of `build` in both paths.",
            "",
            f"Machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
            f"msgspec {msgspec.__version__}, orjson {orjson.__version__}; "
            f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load (1/5/15 min) "
            f"before {before}, after {after}. "
            f"Command: `.venv/bin/python bench/serialize_bench.py --rounds {args.rounds} "
            f"--repeat {args.repeat} --write`.",
        ]
    )
    publish("issue20-schemas", body, args.write)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
