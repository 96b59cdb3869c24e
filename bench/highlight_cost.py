"""What making Tantivy's snippets in Python (``engine.highlight``) saves a page of hits.

    .venv/bin/python bench/highlight_cost.py [--size 0] [--queries 200] [--rounds 6]
        [--modes keyword] [--write]

One process, one scale directory: each title query's first page (24 hits) is searched
once, then ``make_hits`` builds that page again, in rounds that alternate which way runs
first: with the snippets of texts that hold a query term made by Tantivy (the old path:
``engine.highlight.query_fields`` made to answer None) and made in Python. Thread CPU
per page, each round's mean, of the whole ``make_hits`` and of its snippet part alone
(setting up the highlight for the query, then each hit's terms and its title's and
abstract's HTML). The pages must come out the same both ways.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, load_average, log, machine_info, publish  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402

PAGE = 24
# A page to build: (docid, score) pairs, the keyword query, the evidence, the query words.
Page = tuple[list[tuple[int, float]], Any, Any, str]


def run(size: int, n: int, rounds: int, modes: list[str]) -> str:
    from papersift.engine import hits as hits_module
    from papersift.engine.highlight import query_fields
    from papersift.engine.hits import Highlight, make_hits
    from papersift.engine.plan import make_plan
    from papersift.engine.results import Mode, SearchRequest
    from papersift.engine.search import open_engine
    from papersift.engine.why import Evidence, analysed, query_words

    engine = open_engine(bench_config(scale_data.data_path(size)))
    queries = title_queries(sample_docs(size), n)
    data = engine.data

    def use_python(on: bool) -> None:
        hits_module.query_fields = query_fields if on else (lambda *_: None)  # type: ignore[assignment]

    def build(pages: list[Page], on: bool) -> tuple[float, list[object]]:
        """The pages by ``make_hits``: ms per page, and what they hold."""
        use_python(on)
        out: list[object] = []
        c0 = time.thread_time()
        for page, q, evidence, words in pages:
            hits = make_hits(data, page, q, {}, {}, evidence, words)
            out.append([(h.title_html, h.abstract_html, h.why) for h in hits])
        return (time.thread_time() - c0) * 1000 / len(pages), out

    def snippet_part(pages: list[Page], on: bool) -> float:
        """ms per page of ``make_hits``' snippet part (the papers already read)."""
        use_python(on)
        papers = [data.store.get([d for d, _ in page]) for page, *_ in pages]
        c0 = time.thread_time()
        for (_, q, _, words), got in zip(pages, papers, strict=True):
            terms = analysed(words)
            gens = data.lexical.snippet_generators(q)
            fields = hits_module.query_fields(*gens, data.lexical.index.searcher(), words, terms)
            highlight = Highlight(*gens, terms, fields)
            for paper in got.values():
                found = highlight.found(paper)
                highlight.html("ti", paper.title, found)
                highlight.html("abs", paper.abstract, found)
        return (time.thread_time() - c0) * 1000 / len(pages)

    rows = []
    try:
        for mode in modes:
            pages: list[Page] = []
            for q in queries:
                request = SearchRequest(q, mode=cast(Mode, mode), page_size=PAGE)
                result = engine.search(request)
                plan = make_plan(engine, request, PAGE)
                if plan.keyword.query is None:
                    continue
                store = data.store
                page = [(store.docid_of(h.paper.arxiv_id) or -1, h.score) for h in result.hits]
                evidence = Evidence(words=query_words(plan.parsed))
                pages.append((page, plan.keyword.query, evidence, plan.parsed.all_text))
            whole: dict[bool, list[float]] = {False: [], True: []}
            part: dict[bool, list[float]] = {False: [], True: []}
            for r in range(rounds):
                for on in (False, True) if r % 2 == 0 else (True, False):
                    ms, out = build(pages, on)
                    whole[on].append(ms)
                    part[on].append(snippet_part(pages, on))
                    if r == 0 and on:
                        assert out == build(pages, False)[1], "the pages differ"
            use_python(True)
            log(f"{mode}: {len(pages)} pages")
            for on, label in ((False, "Tantivy"), (True, "Python (engine.highlight)")):
                for what, times in (("make_hits", whole[on]), ("snippet part", part[on])):
                    each = " / ".join(f"{x * 1000:.0f}" for x in times)
                    median = sorted(times)[len(times) // 2] * 1000
                    rows.append(f"| {mode} | {what} | {label} | {median:.0f} | {each} |")
    finally:
        use_python(True)
        engine.close()
    info = machine_info()
    head = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale "
        f"directory {scale_data.label(size)}, {n} title queries, page size {PAGE}, {rounds} "
        f"rounds alternating; load average at the end {load_average()}.\n\n"
        "| mode | part | snippets by | µs per page (median) | each round |\n"
        "| --- | --- | --- | ---: | --- |\n"
    )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=0, help="scale directory: 10000, 100000, 0 = all")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--modes", default="keyword")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    body = run(args.size, args.queries, args.rounds, args.modes.split(","))
    publish("highlight cost", body, args.write)


if __name__ == "__main__":
    main()
