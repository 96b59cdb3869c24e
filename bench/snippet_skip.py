"""What skipping Tantivy's snippet for a text without a query term saves (``engine.hits``).

    .venv/bin/python bench/snippet_skip.py [--size 0] [--queries 200] [--rounds 6]
        [--modes keyword,hybrid] [--write]

One process, one scale directory: each title query's first page is searched once, then
``make_hits`` builds that page again, in rounds that alternate which way runs first: with
Tantivy asked for every title and abstract (no query words given, the old path) and with
the skip. Thread CPU per page, each round's mean. The pages must come out the same both
ways, and the share of abstracts that skipped Tantivy is counted.
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
    from papersift.engine.hits import Highlight, make_hits
    from papersift.engine.plan import make_plan
    from papersift.engine.results import Mode, SearchRequest
    from papersift.engine.search import open_engine
    from papersift.engine.why import Evidence, analysed, query_words

    engine = open_engine(bench_config(scale_data.data_path(size)))
    queries = title_queries(sample_docs(size), n)
    rows = []
    try:
        for mode in modes:
            pages: list[Page] = []
            skipped = abstracts = 0
            for q in queries:
                request = SearchRequest(q, mode=cast(Mode, mode), page_size=PAGE)
                result = engine.search(request)
                plan = make_plan(engine, request, PAGE)
                if plan.keyword.query is None:
                    continue
                store = engine.data.store
                page = [(store.docid_of(h.paper.arxiv_id) or -1, h.score) for h in result.hits]
                pages.append(
                    (
                        page,
                        plan.keyword.query,
                        Evidence(words=query_words(plan.parsed)),
                        plan.parsed.all_text,
                    )
                )
                highlight = Highlight(
                    *engine.data.lexical.snippet_generators(plan.keyword.query),
                    analysed(plan.parsed.all_text),
                )
                for h in result.hits:
                    found = highlight.found(h.paper)
                    abstracts += 1
                    terms = highlight.terms or frozenset()
                    skipped += bool(found is not None and not terms & found["abs"])

            def build(pages: list[Page], skip: bool) -> tuple[float, list[object]]:
                out: list[object] = []
                c0 = time.thread_time()
                for page, q, evidence, words in pages:
                    hits = make_hits(
                        engine.data, page, q, {}, {}, evidence, words if skip else None
                    )
                    out.append([(h.title_html, h.abstract_html, h.why) for h in hits])
                return (time.thread_time() - c0) * 1000 / len(pages), out

            times: dict[bool, list[float]] = {False: [], True: []}
            for r in range(rounds):
                for skip in (False, True) if r % 2 == 0 else (True, False):
                    ms, out = build(pages, skip)
                    times[skip].append(ms)
                    if r == 0 and skip:
                        assert out == build(pages, False)[1], "the skip changed a page"
            log(f"{mode}: {len(pages)} pages, {skipped} of {abstracts} abstracts skipped")
            for skip, label in ((False, "Tantivy for every text"), (True, "skip without a term")):
                per_round = times[skip]
                each = " / ".join(f"{x:.2f}" for x in per_round)
                median = sorted(per_round)[len(per_round) // 2]
                rows.append(f"| {mode} | {label} | {median:.2f} | {each} |")
            rows.append(f"| {mode} | abstracts skipped | {skipped} of {abstracts} | |")
    finally:
        engine.close()
    info = machine_info()
    head = (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale "
        f"directory {scale_data.label(size)}, {n} title queries, page size {PAGE}, {rounds} "
        f"rounds alternating; load average at the end {load_average()}.\n\n"
        "| mode | make_hits | ms per page (median) | each round |\n| --- | --- | ---: | --- |\n"
    )
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=0, help="scale directory: 10000, 100000, 0 = all")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    body = run(args.size, args.queries, args.rounds, args.modes.split(","))
    publish("snippet skip", body, args.write)


if __name__ == "__main__":
    main()
