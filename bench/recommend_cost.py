"""What a recommendation costs: the window's texts analysed per request, or once per window.

    .venv/bin/python bench/recommend_cost.py [--size 0] [--queries 12] [--rounds 2] [--write]

A recommendation (``POST /api/v1/recommend``, the radar, a digest section) fits tf-idf and a
linear SVM over its seeds, 500 negatives and the window's papers (by default the 30 days up
to the newest paper). In process, on a scale directory, for ``--queries`` seed sets (five
papers of one category from the 60 days before the window, each set from a random paper):

- *per request*: what each request did before ``engine.recommend_terms``: fetch every text
  of the window and the negatives, fit the vectorizer on all of them (``svm_scores``);
- *kept window*: ``engine.recommend.recommend`` as the product runs it, the window's term
  counts already kept (built by an earlier request);
- *first request*: the same with nothing kept (once a round): the price a new index
  generation or a new window pays once;
- *warm-up*, then *first request after it*: ``engine.recommend.warm_window``, which
  ``serve``'s refresh job runs when the papers change (``engine.radar.warm``), and the
  first request after it (once a round).

CPU (process time) and wall per request, medians over the rounds, and whether both ways rank
the same 20 papers first. The memory the kept counts take is measured afterwards (tracemalloc).
"""

from __future__ import annotations

import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from bench import scale_data
from bench.common import bench_config, load_average, log, machine_info, publish, scale_parser, table
from papersift.engine import recommend as rec
from papersift.engine.lexical_filters import keyword_filter
from papersift.engine.results import Filters, SearchRequest
from papersift.engine.search import SearchEngine, open_engine

PAGE = 20


def seed_sets(engine: SearchEngine, n: int) -> list[list[str]]:
    """``n`` sets of five papers of one category from the 60 days before the default window."""
    window, _ = rec.window(engine, Filters())
    assert window.date_from is not None
    before = Filters(date_from=window.date_from - timedelta(days=60), date_to=window.date_from)
    pool = engine.search(SearchRequest(filters=before, sort="newest", page_size=100)).hits
    rng = random.Random(23)
    sets = []
    for _ in range(n):
        first = rng.choice(pool).paper.categories[0]
        filters = Filters(date_from=before.date_from, date_to=before.date_to, categories=(first,))
        hits = engine.search(SearchRequest(filters=filters, sort="newest", page_size=40)).hits
        sets.append([h.paper.arxiv_id for h in rng.sample(list(hits), min(5, len(hits)))])
    return sets


def per_request(engine: SearchEngine, seeds: list[str]) -> list[int]:
    """The ranking as every request made it before the window's counts were kept."""
    data = engine.data
    found = [d for s in seeds if (d := data.store.docid_of(s)) is not None]
    filters, _ = rec.window(engine, Filters())
    filt = keyword_filter(data.lexical, filters)
    assert filt is not None
    allowed = data.lexical.allowed(filt)
    allowed = allowed[~np.isin(allowed, np.asarray(found, np.int64))]
    texts = rec._texts(engine, [*found, *allowed.tolist()])
    window_ids = [int(d) for d in allowed if int(d) in texts]
    negatives = list(rec._texts(engine, rec._negatives(engine, set(found))).values())
    got = rec.svm_scores([texts[d] for d in found], negatives, [texts[d] for d in window_ids])
    assert got is not None
    order = [i for i in np.argsort(-got.scores, kind="stable") if got.scores[i] >= got.floor]
    return [window_ids[i] for i in order[:PAGE]]  # (the product also drops the far ones)


def kept(engine: SearchEngine, seeds: list[str]) -> list[int]:
    result = rec.recommend(engine, seeds, None, 1, PAGE)
    return [engine.data.store.docid_of(h.paper.arxiv_id) or 0 for h in result.hits]


def timed(
    step: Callable[[SearchEngine, list[str]], list[int]], engine: SearchEngine, seeds: list[str]
) -> tuple[float, float, list[int]]:
    """CPU ms, wall ms and the ranking of one request."""
    c, w = time.process_time(), time.perf_counter()
    out = step(engine, seeds)
    return (time.process_time() - c) * 1000, (time.perf_counter() - w) * 1000, out


def main() -> None:
    ap = scale_parser(__doc__, queries=12, rounds=2)
    args = ap.parse_args()
    engine = open_engine(bench_config(scale_data.data_path(args.size)))
    sets = seed_sets(engine, args.queries)
    cpu: dict[str, list[float]] = {
        "per request": [], "kept window": [], "first request": [], "warm-up": [],
        "first request after the warm-up": [],
    }  # fmt: skip
    wall: dict[str, list[float]] = {k: [] for k in cpu}
    same = 0
    for rnd in range(args.rounds):
        rec._windows.clear()
        c, w, _ = timed(kept, engine, sets[0])
        cpu["first request"].append(c)
        wall["first request"].append(w)
        rec._windows.clear()
        c, w, _ = timed(lambda e, _: [rec.warm_window(e)], engine, [])
        cpu["warm-up"].append(c)
        wall["warm-up"].append(w)
        c, w, _ = timed(kept, engine, sets[0])
        cpu["first request after the warm-up"].append(c)
        wall["first request after the warm-up"].append(w)
        for seeds in sets:
            c1, w1, before = timed(per_request, engine, seeds)
            c2, w2, after = timed(kept, engine, seeds)
            cpu["per request"].append(c1)
            wall["per request"].append(w1)
            cpu["kept window"].append(c2)
            wall["kept window"].append(w2)
            same += before == after
        log(f"round {rnd + 1}: done")
    rec._windows.clear()
    tracemalloc.start()
    kept(engine, sets[0])
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    filters, _ = rec.window(engine, Filters())
    filt = keyword_filter(engine.data.lexical, filters)
    window = len(engine.data.lexical.allowed(filt)) if filt is not None else 0
    rows = [
        [name, f"{statistics.median(cpu[name]):,.0f}", f"{statistics.median(wall[name]):,.0f}",
         len(cpu[name])]
        for name in cpu
    ]  # fmt: skip
    info = machine_info()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = "\n".join(
        [
            f"`.venv/bin/python bench/recommend_cost.py --size {args.size} --queries "
            f"{args.queries} --rounds {args.rounds}` ({stamp}, {info['cpu']}, load "
            f"{load_average()} after the run; revision {info['revision']}). "
            f"{engine.data.store.count():,} papers, the default window holds {window:,}.",
            "",
            table(["way", "CPU ms per request", "wall ms", "requests"], rows),
            "",
            f"Both ways ranked the same {PAGE} papers first for {same} of "
            f"{args.queries * args.rounds} requests. The kept counts of the window took "
            f"{held / 1e6:.0f} MB (tracemalloc, after building them; peak while building "
            f"{peak / 1e6:.0f} MB).",
        ]
    )
    publish("recommend-cost", body, args.write)
    engine.close()


if __name__ == "__main__":
    main()
