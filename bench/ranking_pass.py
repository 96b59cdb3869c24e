"""Where hybrid's keyword ranking pass spends its time, and whether Tantivy prunes it.

    .venv/bin/python bench/ranking_pass.py [--size 0] [--queries 200] [--rounds 4] [--write]

Hybrid ranks the top ``candidates`` (1,000) papers holding any free word of the query
(``engine.match``: one flat disjunction of term queries) plus the query's stop words as
optional clauses: they add to a paper's score but match nothing alone. A flat disjunction
of term queries is what Tantivy's block-max WAND prunes, once the top k's threshold rises;
a required-optional scorer (the stop words) is not. For each title query this times, in one
process and in rounds that alternate the order, the top 10 and the top 1,000 of:

* the query as built (and counting every one of its matches, for comparison);
* the free words' disjunction alone (the query as built when it has no stop words);
* one flat disjunction of the free words and the stop words (prunable, but a paper with
  only stop words now matches too).

Thread CPU per query, the median round, for queries with and without stop words; and how
many queries' top 1,000 the flat form leaves the same (ids and scores to 4 decimals).
When a top 10 costs about what counting every match does, nothing was pruned.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, load_average, log, machine_info, publish, scale_parser  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402

K = 1000


def run(size: int, n: int, rounds: int) -> str:
    import tantivy

    from papersift.engine.lexical_schema import STOP_WORDS, text_analyzer
    from papersift.engine.plan import make_plan
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    engine = open_engine(bench_config(scale_data.data_path(size)))
    lex = engine.data.lexical
    should = tantivy.Occur.Should
    analyser = text_analyzer()  # the abstract field's
    # Per query: the ranking query as built, the free words alone, free and stop words flat.
    built: list[tuple[Any, Any, Any, bool]] = []
    abstract_terms: set[str] = set()  # the queries' free words as the abstract field has them
    try:
        for q in title_queries(sample_docs(size), n):
            plan = make_plan(engine, SearchRequest(q, mode="hybrid", page_size=24), 24)
            if plan.keyword.ranking is None or plan.filt is not None:
                continue
            free: list[Any] = []
            stop: list[Any] = []
            for group in plan.parsed.groups():
                c = group[0]
                if len(group) > 1 or c.sign or c.field or c.phrase:
                    break
                words = re.findall(r"\w+", c.text.lower())
                if words and all(w in STOP_WORDS for w in words):
                    stop.append(lex.parse(c.tantivy_string({}))[0])
                    continue
                terms = lex.word_terms(c.parts())
                if terms is None:
                    break
                free += terms
                abstract_terms.update(analyser.analyze(c.text))
            else:
                union = tantivy.Query.boolean_query([(should, t) for t in free])
                flat = tantivy.Query.boolean_query([(should, t) for t in free + stop])
                built.append((plan.keyword.ranking, union, flat, bool(stop)))
        searcher = lex.index.searcher()
        groups = {"with stop words": [b for b in built if b[3]],
                  "without": [b for b in built if not b[3]]}  # fmt: skip
        Built = tuple[Any, ...]  # the three forms of the query, and whether it has stop words

        def top_of(i: int, k: int) -> Callable[[Built], object]:
            return lambda b: searcher.search(b[i], k, count=False)

        forms = {"as built": 0, "free words alone": 1, "free and stop words flat": 2}
        passes: dict[str, Callable[[Built], object]] = {
            "as built, count every match": lambda b: searcher.search(b[0], 1, count=True),
        }
        for form, i in forms.items():
            for k in (10, K):
                passes[f"{form}, top {k:,}"] = top_of(i, k)
        times: dict[tuple[str, str], list[float]] = {}
        for r in range(rounds):
            order = list(passes.items())
            for label, one in order if r % 2 == 0 else order[::-1]:
                for gname, rows in groups.items():
                    c0 = time.thread_time()
                    for b in rows:
                        one(b)
                    ms = (time.thread_time() - c0) * 1000 / max(1, len(rows))
                    times.setdefault((label, gname), []).append(ms)
            log(f"round {r + 1} of {rounds}")

        def top(query: Any) -> list[tuple[float, int, int]]:
            hits = searcher.search(query, K, count=False).hits
            return [(round(s, 4), a.segment_ord, a.doc) for s, a in hits]

        stopped = groups["with stop words"]
        same = sum(top(b[0]) == top(b[2]) for b in stopped)
        probe = rare_and_common(searcher, lex.schema, sorted(abstract_terms), rounds)
    finally:
        engine.close()
    lines = []
    for label in passes:
        cells = [f"{statistics.median(times[(label, g)]):.2f}" for g in groups]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    info = machine_info()
    counts = ", ".join(f"{len(rows)} {g}" for g, rows in groups.items())
    return (
        f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
        f"revision {info['revision']}; scale directory {scale_data.label(size)}, {len(built)} "
        f"title queries ({counts}), {rounds} rounds alternating; load average at the end "
        f"{load_average()}.\n\n"
        "| Tantivy pass (thread CPU ms per query, median round) | with stop words | without |\n"
        "| --- | ---: | ---: |\n" + "\n".join(lines) + "\n\n"
        f"The flat form's top 1,000 equals the built query's for {same} of {len(stopped)} "
        "queries with stop words (ids, and scores to 4 decimals).\n\n" + probe
    )


def rare_and_common(searcher: Any, schema: Any, terms: list[str], rounds: int) -> str:
    """The rarest and the commonest of ``terms`` in the abstract field, OR-ed: a pruning top
    k would stop after the rare word's papers; one that visits every match costs what a
    count does."""
    import tantivy

    freq = {t: searcher.doc_freq("abs", t) for t in terms}
    rare = min((t for t in terms if freq[t] > 0), key=lambda t: (freq[t], t))
    common = max(terms, key=lambda t: (freq[t], t))
    q = tantivy.Query.boolean_query(
        [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "abs", t)) for t in (rare, common)]
    )
    runs: dict[str, list[float]] = {}
    for _ in range(rounds):
        for label, k, count in (("top 1", 1, False), ("top 10", 10, False), ("count", 1, True)):
            c0 = time.thread_time()
            for _ in range(20):
                matched = searcher.search(q, k, count=count).count
            runs.setdefault(label, []).append((time.thread_time() - c0) * 1000 / 20)
    cells = ", ".join(f"{label} {statistics.median(v):.2f} ms" for label, v in runs.items())
    return (
        f"Probe: abstract terms `{rare}` ({freq[rare]:,} papers) OR `{common}` "
        f"({freq[common]:,}), {matched:,} matches: {cells} (thread CPU, median of {rounds} "
        "rounds of 20).\n"
    )


def main() -> None:
    ap = scale_parser(__doc__)
    args = ap.parse_args()
    publish("ranking pass", run(args.size, args.queries, args.rounds), args.write)


if __name__ == "__main__":
    main()
