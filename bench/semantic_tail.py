"""How much of a hybrid match set the semantic side adds, and how far down its similarity goes.

    .venv/bin/python bench/semantic_tail.py [--config config.toml] [--write]

A paper is a semantic match when the best candidate reaches ``[search] semantic_gate`` and
the paper is within ``semantic_band`` of the best and above ``semantic_floor`` (issue 17,
tuned on SciFact's 5,183 varied biomedical abstracts), and, since session 28, at least
``semantic_zscore`` standard deviations above the query's mean similarity to the corpus
(bench/semantic_judged.py). In a corpus on one field (the demo
corpus: computational linguistics and digital libraries), similarity to a broad query falls
slowly with rank, so the band can admit every one of the ``candidates``. Totals, date sorts
and search feeds then hold hundreds of loosely related papers. For a fixed list of queries
(the examples of issue 17 and common topics of the demo corpus, chosen before measuring):
each mode's total, and the similarity of the best candidate and of those at ranks 30, 100,
300 and 1,000. Run it on a data directory whose papers are all embedded (real vectors: the
scale directories' recycled ones say nothing about relevance).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, machine_info, publish, table
from papersift.core.config_load import load_config
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine

QUERIES = (
    "parsing", "how do people cite software", "word sense disambiguation",
    "zero bubble pipeline parallelism", "machine translation evaluation",
    "citation recommendation", "neural machine translation", "sentiment analysis", "h-index",
    "large language models",
)  # fmt: skip
RANKS = (30, 100, 300, 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", default="config.toml", help="the data directory's config")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    engine = open_engine(load_config(args.config))
    cfg = engine.config.search
    progress = engine.data.embedding_progress()
    rows = []
    try:
        for q in QUERIES:
            totals = [engine.search(SearchRequest(q, mode=m, page_size=1)).total
                      for m in ("keyword", "semantic", "hybrid")]  # fmt: skip
            scores = engine.data.vectors.ranking(
                engine.data.embedder.embed_query(q), cfg.candidates
            ).scores
            at = [f"{scores[r - 1]:.2f}" if len(scores) >= r else "" for r in RANKS]
            rows.append([q, *(f"{t:,}" for t in totals), f"{scores[0]:.2f}", *at])
    finally:
        engine.close()
    info = machine_info()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    head = ["query", "keyword total", "semantic total", "hybrid total", "best cosine"]
    body = (
        f"`.venv/bin/python bench/semantic_tail.py --config {args.config}` ({stamp}, revision "
        f"{info['revision']}, load {load_average()}): {progress.total:,} papers, "
        f"{progress.coverage:.0%} embedded; gate {cfg.semantic_gate}, band "
        f"{cfg.semantic_band}, floor {cfg.semantic_floor}, {cfg.candidates:,} candidates.\n\n"
        + table([*head, *(f"at {r:,}" for r in RANKS)], rows)
    )
    publish("semantic-tail", body, args.write)


if __name__ == "__main__":
    main()
