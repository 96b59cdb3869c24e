"""What a "did you mean" suggestion (``engine.spelling``) costs, per misspelt word.

    .venv/bin/python bench/spelling_cost.py [DATA_DIR] [--rounds 5]

Opens DATA_DIR (default: bench/.cache/scale-full, 663k papers) read-only and times
the suggestion (``did_you_mean``, as ``engine.plan`` asks it) for misspellings of one edit,
of two, and of words with no near word, each the median of ``--rounds`` runs after a first
one (wall and thread CPU; Tantivy and SQLite run on the calling thread). Only a query with
a word no paper holds, or at most ``typo_floor`` papers hold, pays this; a word more papers
hold is skipped, as ``engine.plan`` would not ask.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from papersift.engine.lexical import LexicalIndex
from papersift.engine.spelling import did_you_mean, typo_floor
from papersift.engine.store import PaperStore

ONE_EDIT = ("machien", "lerning", "netwrok", "trasnformer", "citaton", "bibliometrcs",
            "algoritm", "retreival", "grph", "langauge", "summarizaton", "embeddigns")  # fmt: skip
TWO_EDITS = ("lernnig", "clasificaton", "optimisaton", "reinforcment", "entorpy")
NONE_NEAR = ("qzxvbn", "xkqzvwp", "zzqqxxjj")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("data_dir", nargs="?", default="bench/.cache/scale-full", type=Path)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    lex = LexicalIndex(args.data_dir / "lexical")
    store = PaperStore(args.data_dir / "papers.sqlite", readonly=True)
    floor = typo_floor(lex)
    print(f"{lex.num_docs:,} papers in {args.data_dir}; a word at most {floor} hold may be a typo")
    for kind, words in (("one edit", ONE_EDIT), ("two edits", TWO_EDITS), ("none near", NONE_NEAR)):
        walls, cpus = [], []
        for word in words:
            held = {word: lex.postings([word])}
            if held[word] > floor:
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


if __name__ == "__main__":
    main()
