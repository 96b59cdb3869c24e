"""What a "did you mean" suggestion (``engine.spelling``) costs, per misspelt word.

    .venv/bin/python bench/spelling_cost.py [DATA_DIR] [--rounds 5] [--title-queries 200]

Opens DATA_DIR (default: bench/.cache/scale-full, 663k papers) read-only and times
the suggestion (``did_you_mean``, as ``engine.plan`` asks it) for misspellings of one edit,
of two, and of words with no near word, each the median of ``--rounds`` runs after a first
one (wall and thread CPU; Tantivy and SQLite run on the calling thread). Only a query with
a word no paper holds, or at most ``rare_cap`` papers hold, pays this; a word more papers
hold is skipped, as ``did_you_mean`` stops there. ``--title-queries N`` times instead what
the check costs every query: ``did_you_mean`` on each of N title queries (3-5 words of a
paper's title, as bench/run_core.py cuts them, from DATA_DIR's first 20,000 papers), with
the papers each word is held by, thread CPU summed over the queries per round.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.run_core import cut_queries
from papersift.engine.lexical import LexicalIndex
from papersift.engine.spelling import did_you_mean, rare_cap, typo_floor
from papersift.engine.store import PaperStore

ONE_EDIT = ("machien", "lerning", "netwrok", "trasnformer", "citaton", "bibliometrcs",
            "algoritm", "retreival", "grph", "langauge", "summarizaton", "embeddigns")  # fmt: skip
TWO_EDITS = ("lernnig", "clasificaton", "optimisaton", "reinforcment", "entorpy")
NONE_NEAR = ("qzxvbn", "xkqzvwp", "zzqqxxjj")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir", nargs="?", default="bench/.cache/scale-full", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--title-queries", type=int, default=0, metavar="N")
    args = ap.parse_args()
    lex = LexicalIndex(args.data_dir / "lexical")
    store = PaperStore(args.data_dir / "papers.sqlite", readonly=True)
    if args.title_queries:
        title_queries(lex, store, args.title_queries, args.rounds)
        return
    floor, cap = typo_floor(lex), rare_cap(lex)
    print(
        f"{lex.num_docs:,} papers in {args.data_dir}; a word held by none is offered one more "
        f"than {floor} hold; a word at most {cap} hold may be a typo"
    )
    for kind, words in (("one edit", ONE_EDIT), ("two edits", TWO_EDITS), ("none near", NONE_NEAR)):
        walls, cpus = [], []
        for word in words:
            held = {word: lex.postings([word])}
            if held[word] > cap:
                print(f"  {word}: held by {held[word]:,} papers, skipped")
                continue
            did_you_mean(lex, store, word, held)  # the first run reads pages into the OS cache
            wall, cpu = [], []
            for _ in range(args.rounds):
                w0, c0 = time.perf_counter(), time.thread_time()
                found = did_you_mean(lex, store, word, held)
                cpu.append(time.thread_time() - c0)
                wall.append(time.perf_counter() - w0)
            walls.append(statistics.median(wall))
            cpus.append(statistics.median(cpu))
            print(
                f"  {word:14s} ({held[word]} papers) -> {found!s:15s} {walls[-1] * 1e3:6.1f} ms "
                f"({cpus[-1] * 1e3:.1f} CPU)"
            )
        if walls:
            print(
                f"{kind}: median {statistics.median(walls) * 1e3:.1f} ms wall, "
                f"{statistics.median(cpus) * 1e3:.1f} ms CPU; worst {max(walls) * 1e3:.1f} ms"
            )


def title_queries(lex: LexicalIndex, store: PaperStore, n: int, rounds: int) -> None:
    """CPU of the spelling check over ``n`` title queries, per round; which suggest."""
    titles: list[str] = []
    for batch in store.changed_since(0, 5000):
        titles.extend(p.title for _, p, _ in batch)
        if len(titles) >= 20_000:
            break
    queries = cut_queries(titles[:20_000], n, 20240601, _words)
    helds = [{w: lex.postings([w]) for w in _words(q)} for q in queries]
    found = [did_you_mean(lex, store, q, h) for q, h in zip(queries, helds, strict=True)]
    for q, f in zip(queries, found, strict=True):
        if f is not None:
            print(f"  {q!r} -> {f}")
    totals, worst = [], 0.0
    for _ in range(rounds):
        total = 0.0
        for q, h in zip(queries, helds, strict=True):
            c0 = time.thread_time()
            did_you_mean(lex, store, q, h)
            took = time.thread_time() - c0
            total, worst = total + took, max(worst, took)
        totals.append(total)
    print(
        f"{len(queries)} title queries, {sum(f is not None for f in found)} with a suggestion: "
        f"{statistics.median(totals) * 1e3:.1f} ms CPU in all (rounds "
        f"{' / '.join(f'{t * 1e3:.1f}' for t in totals)}), "
        f"{statistics.median(totals) / len(queries) * 1e3:.2f} ms a query; worst query "
        f"{worst * 1e3:.1f} ms"
    )


def _words(title: str) -> list[str]:
    return [w for w in re.findall(r"[\w-]+", title.lower()) if w != "-"]


if __name__ == "__main__":
    main()
