"""What each native step of a new search costs, warm, in process (issue 23).

    .venv/bin/python bench/search_steps.py [--size 0] [--queries 200] [--rounds 3] [--write]

The title queries of a scale directory are planned once (``engine.plan.make_plan``, as
hybrid plans them); then each step runs alone over all of them: planning, hybrid's any-word
ranking pass (top 1,000), the match set's pass (top 2,000 with its count, as keyword mode
and hybrid's keyword side run it), split into the queries that need every free word and the
minimum-should-match ones, the query embedding and the vector index's top 1,000. Process
CPU per query, the best round after one untimed round over every query (a cold first round
read twice the warm figure: pages of the index mapped for the first time).

The vector step runs twice: the graph mapped from its file (as CLI commands open it) and read
into memory on huge pages (as the server does, ``engine.huge_pages``).

This says where the floor of ``bench/search_cpu.py``'s CPU per request is; the rest of a
request is our own Python (hits, facets, fusion) and the HTTP server.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import (  # noqa: E402
    bench_config,
    load_average,
    log,
    machine_info,
    publish,
    scale_parser,
    served_vectors,
)
from bench.peers.compare import sample_docs, title_queries  # noqa: E402

CANDIDATES = 1000  # [search] candidates' default: hybrid's lists
MATCH_WINDOW = 2000  # engine.search.KEYWORD_WINDOW: the match set's pass


def best_ms(items: Sequence[Any], step: Callable[[Any], object], rounds: int) -> float:
    """Process CPU per item of ``step`` over all ``items``: the best of ``rounds`` rounds,
    after one untimed round."""
    for item in items:
        step(item)
    best = float("inf")
    for _ in range(rounds):
        c0 = time.process_time()
        for item in items:
            step(item)
        best = min(best, (time.process_time() - c0) * 1000 / len(items))
    return best


def run(size: int, n: int, rounds: int) -> str:
    from papersift.engine.plan import make_plan
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    engine = open_engine(bench_config(scale_data.data_path(size)))
    try:
        lex = engine.data.lexical
        embedder, vectors = engine.data.embedder, engine.data.vectors
        queries = title_queries(sample_docs(size), n)
        plans = [make_plan(engine, SearchRequest(q, mode="hybrid", page_size=24), 24)
                 for q in queries]  # fmt: skip
        every = [p for p in plans if p.keyword.required == p.keyword.free_terms]
        some = [p for p in plans if p.keyword.required < p.keyword.free_terms]
        qvecs = {p.semantic_text: embedder.embed_query(p.semantic_text) for p in plans}
        in_memory = served_vectors(engine)
        log(f"search-steps: {len(plans)} plans ({len(every)} all-words, {len(some)} some)")
        steps: list[tuple[str, Sequence[Any], Callable[[Any], object]]] = [
            ("plan (`make_plan`, with the title-phrase search)", plans,
             lambda p: make_plan(engine, p.request, 24)),
            (f"hybrid's any-word top {CANDIDATES:,} (`lex.top`)", plans,
             lambda p: lex.top(p.keyword.ranking, CANDIDATES)),
            (f"the match set's top {MATCH_WINDOW:,} and count (`lex.search`)", plans,
             lambda p: lex.search(p.keyword.query, MATCH_WINDOW)),
            (f"... of the {len(every)} queries needing every free word", every,
             lambda p: lex.search(p.keyword.query, MATCH_WINDOW)),
            (f"... of the {len(some)} minimum-should-match queries", some,
             lambda p: lex.search(p.keyword.query, MATCH_WINDOW)),
            ("the query embedding", plans, lambda p: embedder.embed_query(p.semantic_text)),
            (f"the vector index's top {CANDIDATES:,}, graph mapped (CLI)", plans,
             lambda p: vectors.ranking(qvecs[p.semantic_text], CANDIDATES)),
            (f"the vector index's top {CANDIDATES:,}, graph in memory (as served)", plans,
             lambda p: in_memory.ranking(qvecs[p.semantic_text], CANDIDATES)),
        ]  # fmt: skip
        rows = []
        for label, items, step in steps:
            if items:
                rows.append(f"| {label} | {best_ms(items, step, rounds):.2f} |")
                log(f"search-steps: {rows[-1]}")
    finally:
        engine.close()
    info = machine_info()
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {len(plans)} "
        f"title queries, best of {rounds} rounds after a warm one; load average at the end "
        f"{load_average()}.\n\n"
        "| step (per query, in process) | ms of CPU |\n| --- | ---: |\n" + "\n".join(rows) + "\n"
    )


def main() -> None:
    ap = scale_parser(__doc__, rounds=3)
    args = ap.parse_args()
    scale_data.require(args.size)
    publish("search steps", run(args.size, args.queries, args.rounds), args.write)


if __name__ == "__main__":
    main()
