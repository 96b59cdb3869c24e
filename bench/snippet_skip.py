"""What skipping Tantivy's snippet for a text without a query term saves (``engine.hits``).

    .venv/bin/python bench/snippet_skip.py [--size 0] [--queries 200] [--rounds 6]
        [--modes keyword,hybrid] [--write]

One process, one scale directory: each title query's first page is searched once, then
``make_hits`` builds that page again, in rounds that alternate which way runs first: with
Tantivy asked for every title and abstract (no query words given, the old path) and with
the skip. Thread CPU per page, each round's mean. The pages must come out the same both
ways, and the share of abstracts that skipped Tantivy is counted. Since ``engine.highlight``
the second way also makes the other texts' snippets in Python; bench/highlight_cost.py
measures that part alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, log, publish, scale_parser  # noqa: E402
from bench.hit_pages import build_pages, make_pages, table_head  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402


def run(size: int, n: int, rounds: int, modes: list[str]) -> str:
    from papersift.engine.hits import Highlight
    from papersift.engine.search import open_engine
    from papersift.engine.why import analysed

    engine = open_engine(bench_config(scale_data.data_path(size)))
    data = engine.data
    queries = title_queries(sample_docs(size), n)
    rows = []
    try:
        for mode in modes:
            pages = make_pages(engine, queries, mode)
            skipped = abstracts = 0
            for page, q, _, words in pages:
                highlight = Highlight(*data.lexical.snippet_generators(q), analysed(words))
                for paper in data.store.get([d for d, _ in page]).values():
                    found = highlight.found(paper)
                    abstracts += 1
                    terms = highlight.terms or frozenset()
                    skipped += bool(found is not None and not terms & found["abs"])
            times: dict[bool, list[float]] = {False: [], True: []}
            for r in range(rounds):
                for skip in (False, True) if r % 2 == 0 else (True, False):
                    ms, out = build_pages(data, pages, with_words=skip)
                    times[skip].append(ms)
                    if r == 0 and skip:
                        assert out == build_pages(data, pages, False)[1], "the skip changed a page"
            log(f"{mode}: {len(pages)} pages, {skipped} of {abstracts} abstracts skipped")
            for skip, label in ((False, "Tantivy for every text"), (True, "skip without a term")):
                per_round = times[skip]
                each = " / ".join(f"{x:.2f}" for x in per_round)
                median = sorted(per_round)[len(per_round) // 2]
                rows.append(f"| {mode} | {label} | {median:.2f} | {each} |")
            rows.append(f"| {mode} | abstracts skipped | {skipped} of {abstracts} | |")
    finally:
        engine.close()
    head = table_head(size, n, rounds, "mode | make_hits | ms per page (median) | each round")
    return head + "\n".join(rows) + "\n"


def main() -> None:
    ap = scale_parser(__doc__, rounds=6)
    ap.add_argument("--modes", default="keyword,hybrid")
    args = ap.parse_args()
    body = run(args.size, args.queries, args.rounds, args.modes.split(","))
    publish("snippet skip", body, args.write)


if __name__ == "__main__":
    main()
