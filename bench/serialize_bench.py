"""Serialisation cost of a search response (issue 20): the dict + orjson path the API had
against the msgspec Struct + msgspec.json path it has now (``server.schemas``).

Real ``Paper`` objects from the bundled demo corpus (``record_to_paper``) make 20- and
100-hit pages; each hit gets a snippet like the engine's (escaped abstract start, a query
word in <b>), ranks, a score and a "why"; facets as a search returns them (the researchers
and institutions with their names). Both paths build the body from the same
``SearchResult`` and encode it; the outputs are checked byte-identical first, and the run
stops, naming the first field that differs, if they are not (``check_same``): the old
path must write every field the schema has, or the timing compares unlike bodies. Timing
alternates the two paths (A/B/A/B...) over ``--rounds`` rounds of ``--repeat`` responses
each and reports medians and their ratio.

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
from papersift.engine.results import (
    FacetCount,
    Filters,
    Fused,
    Hit,
    SearchRequest,
    SearchResult,
    Why,
)
from papersift.indexer.snapshot import record_to_paper
from papersift.server.bodies import search_body
from papersift.server.schemas import FacetNames

ROOT = "https://papers.example.org"
NEXT = ROOT + "/api/v1/search?q=neural+networks&page=2"


# -- the path before issue 20 as the baseline -----------------------------------------------
# Dicts built field by field and encoded by orjson, as before issue 20; the fields the
# schema gained since (the request's researcher_id and institution, reachable, a hit's why,
# the facets' names) are built the same way, so both paths write the same body.
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


def _old_why(w: Why) -> dict[str, Any]:
    f = w.fused
    return {
        "keyword_rank": w.keyword_rank,
        "keyword_score": None if w.keyword_score is None else _number(w.keyword_score),
        "semantic_rank": w.semantic_rank,
        "similarity": None if w.similarity is None else _number(w.similarity),
        "title_rule": w.title_rule,
        "matched": {name: list(words) for name, words in w.matched.items()},
        "filters": list(w.filters),
        "fused": {
            "method": f.method,
            "keyword": _number(f.keyword) or 0.0,
            "semantic": _number(f.semantic) or 0.0,
        }
        if f
        else None,
        "standout": None if w.standout is None else _number(w.standout),
        "keyword_match": w.keyword_match,
    }


def _old_hit(h: Hit, root: str) -> dict[str, Any]:
    return {
        "paper": _old_paper(h.paper, root),
        "score": _number(h.score),
        "title_html": h.title_html,
        "snippet_html": h.abstract_html,
        "ranks": dict(h.ranks),
        "why": _old_why(h.why) if h.why is not None else None,
    }


def _old_facets(result: SearchResult, names: FacetNames) -> dict[str, Any]:
    counted = result.facets

    def plain(facet: str) -> list[dict[str, Any]]:
        return [{"value": v.value, "count": v.count} for v in counted.get(facet, ())]

    def named(facet: str) -> list[dict[str, Any]]:
        known = names.get(facet, {})
        return [{**f, "name": known.get(f["value"])} for f in plain(facet)]

    return {
        "categories": plain("categories"),
        "years": plain("years"),
        "researchers": named("researchers"),
        "institutions": named("institutions"),
        "counted_among_first": result.facet_window,
    }


def old_search(
    result: SearchResult, root: str, nxt: str | None, names: FacetNames
) -> dict[str, Any]:
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
            "researcher_id": list(f.researcher_ids),
            "institution": list(f.institutions),
            "from": f.date_from.isoformat() if f.date_from else None,
            "to": f.date_to.isoformat() if f.date_to else None,
            "autocorrect": req.autocorrect,
        },
        "mode": result.mode,
        "total": result.total,
        "page": result.page,
        "page_size": result.page_size,
        "pages": result.pages,
        "reachable": min(result.total, result.pages * result.page_size),
        "took_ms": _number(result.took_ms),
        "warnings": list(result.warnings),
        "suggestion": result.suggestion,
        "corrected": result.corrected,
        "direct": _old_paper(result.direct, root) if result.direct else None,
        "missing_id": result.missing_id,
        "researchers": [
            {"id": r.rid, "name": r.name, "papers": r.papers, "url": root + _rurl(r.rid, r.name)}
            for r in result.researchers
        ],
        "facets": _old_facets(result, names),
        "hits": [_old_hit(h, root) for h in result.hits],
        "next": nxt,
        "looser": [],  # filled only for an empty answer, by the API itself
    }


# -- the data -------------------------------------------------------------------------------
def demo_papers(n: int) -> list[Paper]:
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        return [record_to_paper(json.loads(line)) for _, line in zip(range(n), fh, strict=False)]


def _snippet(text: str, word: str) -> str:
    start = escape(text[:280])
    return start.replace(escape(word), f"<b>{escape(word)}</b>", 1) + "…"


def _why(i: int) -> Why:
    """A hybrid hit's reasons, every field set (as a search's hits have them)."""
    return Why(
        keyword_rank=i + 1, keyword_score=12.5 - i * 0.1, semantic_rank=i + 3,
        similarity=0.61 - i * 1e-3, title_rule=i == 0,
        matched={"title": ("neural",), "abstract": ("neural", "networks")},
        filters=("category cs",), fused=Fused("convex", 0.02, 0.0125 - i * 1e-4),
        standout=3.25, keyword_match=i % 7 != 6,
    )  # fmt: skip


def result_of(papers: list[Paper]) -> tuple[SearchResult, FacetNames]:
    """A page of hits of ``papers`` and the names of its id-valued facets (one researcher id
    unknown, as after an identity refresh: its name is null)."""
    hits = tuple(
        Hit(p, 0.0325 - i * 1e-4, _snippet(p.title, p.title.split()[0]),
            _snippet(p.abstract, p.abstract.split()[0]), {"keyword": i + 1, "semantic": i + 3},
            _why(i))
        for i, p in enumerate(papers)
    )  # fmt: skip
    cats = Counter(c for p in papers for c in p.categories)
    years = Counter(str(p.published.year) for p in papers)
    authors = Counter(a.name for p in papers for a in p.authors).most_common(15)
    rids = {name: str(1000 + i) for i, (name, _) in enumerate(authors)}
    places = {"00cvxb145": "University of Washington", "05a28rw58": "ETH Zurich"}
    facets = {
        "categories": tuple(FacetCount(c, n) for c, n in cats.most_common(15)),
        "years": tuple(FacetCount(y, n) for y, n in sorted(years.items(), reverse=True)),
        "researchers": tuple(FacetCount(rids[name], n) for name, n in authors),
        "institutions": tuple(FacetCount(ror, 3 - i) for i, ror in enumerate(places)),
    }
    names = {
        "researchers": {rid: name for name, rid in list(rids.items())[1:]},
        "institutions": places,
    }
    request = SearchRequest(query="neural networks", filters=Filters(categories=("cs",)))
    result = SearchResult(request, "hybrid", hits, 5_214, 1, len(hits), facets, took_ms=12.75)
    return result, names


# -- timing ---------------------------------------------------------------------------------
def old_path(result: SearchResult, names: FacetNames) -> bytes:
    return orjson.dumps(old_search(result, ROOT, NEXT, names))


_ENCODER = msgspec.json.Encoder()


def new_path(result: SearchResult, names: FacetNames) -> bytes:
    return _ENCODER.encode(search_body(result, ROOT, NEXT, names))


def _first_difference(old: Any, new: Any, path: str = "$") -> str | None:
    """Where two decoded JSON values first differ (key order included), or None."""
    if isinstance(old, dict) and isinstance(new, dict):
        if list(old) != list(new):
            return f"{path}: keys {list(old)} != {list(new)}"
        for key in old:
            found = _first_difference(old[key], new[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return f"{path}: {len(old)} items != {len(new)}"
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            found = _first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        return None
    same = type(old) is type(new) and old == new
    return None if same else f"{path}: {old!r} (old) != {new!r} (new)"


def check_same(old: bytes, new: bytes) -> None:
    """Stop (SystemExit, so ``python -O`` checks too) unless the two paths wrote the same
    bytes, naming the first field that differs."""
    if old == new:
        return
    where = _first_difference(json.loads(old), json.loads(new))
    if where is None:
        at = next(i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b)
        where = f"byte {at} (the same JSON written differently)"
    raise SystemExit(f"the old and new paths write different bytes, first at {where}")


def per_response_us(fn: Callable[[], object], n: int) -> float:
    """CPU time of this process per call (the machine is shared: wall time counts the
    other processes' turns too)."""
    t0 = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - t0) / n * 1e6


def measure(hits: int, rounds: int, repeat: int) -> list[str]:
    result, names = result_of(demo_papers(hits))
    old, new = old_path(result, names), new_path(result, names)
    check_same(old, new)
    old_body = old_search(result, ROOT, NEXT, names)
    new_body = search_body(result, ROOT, NEXT, names)
    paths: dict[str, Callable[[], object]] = {
        "old": lambda: old_path(result, names),
        "new": lambda: new_path(result, names),
        "old_build": lambda: old_search(result, ROOT, NEXT, names),
        "new_build": lambda: search_body(result, ROOT, NEXT, names),
        "old_encode": lambda: orjson.dumps(old_body),
        "new_encode": lambda: _ENCODER.encode(new_body),
    }
    times: dict[str, list[float]] = {k: [] for k in paths}
    for _ in range(3):  # warm up
        old_path(result, names), new_path(result, names)
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
            "(`server.bodies.search_body`). Real demo-corpus papers, snippets like the "
            "engine's and a why each, four facets (two with names); both paths write the same "
            f"bytes (checked). Medians of {args.rounds} alternating rounds of {args.repeat} "
            "responses, CPU time of the process per response; `build` is the body alone, "
            "`encode` its encoding alone.",
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
