"""Umlauts written out (``engine.umlauts``) at scale: which words get their other spelling,
what it adds, and what it costs.

    .venv/bin/python bench/umlauts.py [--size 0] [--queries 200] [--write]

Three tables over a scale directory: the verdict on words chosen before the rule was
tuned (German and Nordic names and words, and English words whose e-less or e-added form
is another word), with how the newest 50 papers holding the folded word write it; keyword
totals with the rule off and on, in relevance order and newest first; and the CPU the
rule adds to planning the bench's title queries, once with no verdict known (each word's
papers read) and once with every verdict kept.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, log, machine_info, publish, run_heading, scale_parser  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402

WORDS = (
    "Schrodinger", "Schroedinger", "holder", "Kahler", "Mobius", "Godel", "Lowner", "Huckel",
    "Konig", "Muller", "Mueller", "Borner", "Schafer", "Rossler", "Moller", "Zurich",
    "Gottingen", "Erdos", "Bohm", "Lowe", "Noether", "Uber", "Bose", "does", "poet", "goes",
    "blue", "value", "Michael", "Joel", "Thue",
)  # fmt: skip
QUERIES = (
    "Schroedinger equation", "Schrödinger equation", "nonlinear Schrodinger",
    "Kahler manifolds", "Holder continuity", "Mobius transformation", "Godel incompleteness",
    "Lowner evolution", "Hueckel", "Mueller", "au:Mueller", "Mueller matrix",
    "Bose Einstein condensate", "does",
)  # fmt: skip


def run(size: int, n: int) -> str:
    from papersift.engine import umlauts
    from papersift.engine.results import SearchRequest
    from papersift.engine.search import open_engine

    config = bench_config(scale_data.data_path(size))
    off = dataclasses.replace(
        config, search=dataclasses.replace(config.search, match_umlaut_spellings=False)
    )
    engine = open_engine(config)
    try:
        lex, store = engine.data.lexical, engine.data.store
        fold = lex.analyzer("words")
        verdicts = ["| word | other spelling | newest papers holding it that write it with an "
                    "umlaut |", "| --- | --- | --- |"]  # fmt: skip
        for word in WORDS:
            other = umlauts.Umlauts().other_spelling(lex, store, word)
            folded = fold.analyze(word)[0]
            written, writing, sampled = umlauts.written_ways(lex, store, folded)
            ways = ", ".join(f"{w} {k}" for w, k in written.most_common(2))
            verdicts.append(f"| {word} | {other or '-'} | {writing} of {sampled}"
                            f"{f' ({ways})' if ways else ''} |")  # fmt: skip
        totals = ["| query | relevance: off | on | newest: off | on |",
                  "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
        for q in QUERIES:
            row = []
            for sort in ("relevance", "newest"):
                for cfg in (off, config):
                    engine.config = cfg
                    request = SearchRequest(q, mode="keyword", sort=sort, page_size=1)
                    row.append(f"{engine.search(request).total:,}")  # type: ignore[arg-type]
            engine.config = config
            totals.append(f"| {q} | " + " | ".join(row) + " |")
        words = [w for q in title_queries(sample_docs(size), n) for w in q.split()]
        cold = umlauts.Umlauts()
        c0 = time.process_time()
        added = {w: a for w in words if (a := cold.other_spelling(lex, store, w))}
        c1 = time.process_time()
        for w in words:
            cold.other_spelling(lex, store, w)
        c2 = time.process_time()
        log(f"umlauts: {len(words)} words, added {added}")
    finally:
        engine.close()
    return (
        f"{run_heading('umlauts.py')}; {machine_info()['cpu']}; {scale_data.label(size)}.\n\n"
        + "\n".join(verdicts) + "\n\nKeyword totals, the rule off and on:\n\n"
        + "\n".join(totals) + "\n\n"
        + f"Cost over the words of {n} title queries ({len(words)} words): "
        f"{1000 * (c1 - c0) / n:.3f} ms of CPU per query with no verdict kept, "
        f"{1000 * (c2 - c1) / n:.3f} ms with every verdict kept; other spellings added: "
        + (", ".join(f"{w} -> {a}" for w, a in added.items()) or "none") + ".\n"
    )  # fmt: skip


def main() -> None:
    ap = scale_parser(__doc__)
    args = ap.parse_args()
    scale_data.require(args.size)
    publish("umlauts", run(args.size, args.queries), args.write)


if __name__ == "__main__":
    main()
