"""The institutions facet at scale: Tantivy's count of the ``inst`` field over a search's first
200 papers against the facet table's (issue 23).

    .venv/bin/python bench/institution_facet.py [--size 0] [--rounds 4] [--write]

No benchmark corpus has institutions (they come from enrichment), so this works on a copy of
the scale directory's store (``bench/.cache/enriched-SIZE``, kept for the next run) whose
papers are given affiliations, and a keyword index written from it: 0 to 12 institutions a
paper (a quarter none, as papers without an enrichment match), drawn from the shared ROR
extract's ids with a Zipf law (a few institutions in many papers, as in real data). The
windows are real: the first 200 any-word matches of the 200 title queries. Both sides must
give the same counts for every window; times are thread CPU, rounds alternating.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from itertools import islice
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import (
    ROOT,
    git_revision,
    load_average,
    log,
    machine_info,
    publish,
    scale_parser,
    table,
)
from bench.peers.compare import sample_docs, title_queries
from bench.ror_import import EXTRACT
from papersift.core.paper import Paper
from papersift.engine.enrichment import AFFILIATIONS_KEY
from papersift.engine.facet_table import FacetTable
from papersift.engine.lexical import LexicalIndex
from papersift.engine.lexical_rewrite import REWRITE_HEAP
from papersift.engine.store import PaperStore

PER_PAPER = [0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 6, 12]
WINDOW = 200  # engine.search.PEOPLE_WINDOW


def ror_ids(limit: int = 40_000) -> list[str]:
    with gzip.open(EXTRACT, "rt", encoding="utf-8") as fh:
        return [json.loads(line)["id"].rsplit("/", 1)[-1] for line in islice(fh, limit)]


def enriched_copy(size: int) -> Path:
    """The scale directory's store with synthetic affiliations and its keyword index."""
    root = ROOT / "bench" / ".cache" / f"enriched-{size or 'full'}"
    if (root / "done").exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    log(f"copying the store into {root}")
    shutil.copyfile(scale_data.data_path(size) / "papers.sqlite", root / "papers.sqlite")
    rng, ids = random.Random(23), ror_ids()
    with sqlite3.connect(root / "papers.sqlite") as db:
        docids = [d for (d,) in db.execute("SELECT docid FROM papers")]
        updates = []
        for d in docids:
            n = rng.choice(PER_PAPER)
            picks = [ids[min(int(rng.paretovariate(0.6)) - 1, len(ids) - 1)] for _ in range(n)]
            raw = json.dumps([[k, r, f"Institution {r}"] for k, r in enumerate(picks)])
            updates.append((json.dumps([[AFFILIATIONS_KEY, raw]]) if n else "[]", d))
        db.executemany("UPDATE papers SET extra = ? WHERE docid = ?", updates)
    log("writing the keyword index")
    store = PaperStore(root / "papers.sqlite")
    lex = LexicalIndex(root / "lexical")

    def chunks() -> Iterator[list[tuple[int, Paper]]]:
        for batch in store.changed_since(0):
            yield [(d, p) for d, p, _ in batch]

    lex.replace_all(chunks(), REWRITE_HEAP)
    store.close()
    (root / "done").write_text("ok\n")
    return root


def thread_ms(fn: Callable[[list[int]], object], windows: Sequence[list[int]]) -> float:
    t0 = time.thread_time()
    for w in windows:
        fn(w)
    return (time.thread_time() - t0) * 1000 / len(windows)


def main() -> None:
    ap = scale_parser(__doc__, queries=None)
    args = ap.parse_args()
    root = enriched_copy(args.size)
    lex = LexicalIndex(root / "lexical")
    table_ = FacetTable(root / "papers.sqlite")
    t0, c0 = time.perf_counter(), time.process_time()
    table_.build()
    build_s, build_cpu = time.perf_counter() - t0, time.process_time() - c0
    windows = []
    for q in title_queries(sample_docs(args.size), 200):
        query, _ = lex.parse(" OR ".join(q.split()))
        windows.append(lex.search(query, WINDOW)[0])
    windows = [w for w in windows if w]

    def by_tantivy(w: list[int]) -> object:
        return lex.facets(lex.docids_for(w), 30, ("institutions",))["institutions"]

    def by_table(w: list[int]) -> object:
        return table_.institutions(w, 30)

    same = sum(by_tantivy(w) == by_table(w) for w in windows)
    rounds: dict[str, list[float]] = {"Tantivy": [], "table": []}
    for _ in range(args.rounds):
        rounds["Tantivy"].append(thread_ms(by_tantivy, windows))
        rounds["table"].append(thread_ms(by_table, windows))
    t, f = (statistics.median(rounds[k]) for k in ("Tantivy", "table"))
    m = machine_info()
    body = "\n".join(
        [
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {m['cpu']}, revision "
            f"{git_revision()}; scale directory {args.size or 'full'} with synthetic affiliations, "
            f"{len(windows)} windows of up to {WINDOW} papers, {args.rounds} rounds alternating; "
            f"load average at the end {load_average()}.",
            "",
            table(
                ["institutions facet of a window (thread CPU ms, median round)", "ms", "ratio"],
                [
                    ["Tantivy (docid term set + terms aggregation)", f"{t:.3f}", "1.00"],
                    ["facet table", f"{f:.3f}", f"{f / t:.3f}"],
                ],
            ),
            "",
            f"Same counts for {same} of {len(windows)} windows. Building the table (dates, "
            f"categories and institutions): {build_s:.1f} s wall, {build_cpu:.1f} s CPU.",
        ]
    )
    publish("institution facet", body, args.write)


if __name__ == "__main__":
    main()
