"""Search pages to rebuild with ``make_hits``: what bench/snippet_skip.py and
bench/highlight_cost.py time (the first page of each title query, searched once)."""

from __future__ import annotations

import time
from typing import Any, cast

from bench import scale_data
from bench.common import load_average, machine_info

PAGE = 24
# A page to build: (docid, score) pairs, the keyword query, the evidence, the query words.
Page = tuple[list[tuple[int, float]], Any, Any, str]


def make_pages(engine: Any, queries: list[str], mode: str) -> list[Page]:
    """Each query's first page (searched once) with what ``make_hits`` needs to build it."""
    from papersift.engine.plan import make_plan
    from papersift.engine.results import Mode, SearchRequest
    from papersift.engine.why import Evidence, query_words

    pages: list[Page] = []
    for q in queries:
        request = SearchRequest(q, mode=cast(Mode, mode), page_size=PAGE)
        result = engine.search(request)
        plan = make_plan(engine, request, PAGE)
        if plan.keyword.query is None:
            continue
        store = engine.data.store
        page = [(store.docid_of(h.paper.arxiv_id) or -1, h.score) for h in result.hits]
        evidence = Evidence(words=query_words(plan.parsed))
        pages.append((page, plan.keyword.query, evidence, plan.parsed.all_text))
    return pages


def build_pages(
    data: Any, pages: list[Page], with_words: bool = True
) -> tuple[float, list[object]]:
    """The pages by ``make_hits`` (``with_words``: given the query's words, which let a text
    without them skip the snippet): thread CPU ms per page, and what the pages hold."""
    from papersift.engine.hits import make_hits

    out: list[object] = []
    c0 = time.thread_time()
    for page, q, evidence, words in pages:
        hits = make_hits(data, page, q, {}, {}, evidence, words if with_words else None)
        out.append([(h.title_html, h.abstract_html, h.why) for h in hits])
    return (time.thread_time() - c0) * 1000 / len(pages), out


def table_head(size: int, n: int, rounds: int, columns: str) -> str:
    """The line that says when and on what a table was measured, and the table's head."""
    info = machine_info()
    names = [c.strip() for c in columns.split("|")]
    aligns = ["---:" if "median" in c else "---" for c in names]
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {n} title "
        f"queries, page size {PAGE}, {rounds} rounds alternating; load average at the end "
        f"{load_average()}.\n\n| {' | '.join(names)} |\n| {' | '.join(aligns)} |\n"
    )
