"""Choosing the match rules (issue 17): minimum-should-match and the semantic floor on SciFact.

Every setting runs the 809 SciFact train claims through the real ``SearchEngine`` (hybrid,
one page of 100) and records nDCG@10, Recall@100 and the match-set size (the result's
``total``). The choice is held out: the claims are split in two by a fixed hash
(``scifact.fold_of``); on each half, among the settings whose nDCG@10 and R@100 stay within
0.005 of the no-rule baseline *on that half*, the one with the smallest median match set
is picked, and it is scored on the other half. Then:

* nonsense queries (random letter strings, fixed seed) on SciFact: the best cosine any
  paper reaches, which the floor has to clear;
* partial embedding: SciFact with vectors for only a share of the abstracts, keyword alone
  against hybrid at the default weight and at weight x coverage.

    .venv/bin/python bench/match_set.py [--quick] [--skip-coverage]
"""

from __future__ import annotations

import argparse
import random
import string
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_config, load_average, log, table
from bench.scifact import PAGE, SciFact, build, fold_of, load, ndcg, recall, synthetic_id
from engine.datadir import DataDir
from engine.results import Mode, SearchRequest
from engine.search import open_engine
from papersift.config import SearchConfig

TOLERANCE = 0.005
# Minimum-should-match rules (all words up to A, then a fraction F) and semantic floors.
BASELINE = {"match_all_up_to": 1, "match_fraction": 0.0, "semantic_floor": 0.0}  # OR, no floor
MSM = [(a, f) for a in (2, 3, 4) for f in (0.5, 0.6, 0.75)]
FLOORS = (0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
COVERAGES = (0.05, 0.25, 0.5, 0.75, 0.9)


@dataclass
class Run:
    label: str
    search: dict[str, Any]
    ndcg: list[float]
    recall: list[float]
    total: list[int]
    ms: list[float]

    def on(self, idx: Sequence[int]) -> tuple[float, float, float]:
        return (
            float(np.mean([self.ndcg[i] for i in idx])),
            float(np.mean([self.recall[i] for i in idx])),
            float(np.median([self.total[i] for i in idx])),
        )


def run(
    sf: SciFact, data_dir: Path, search: dict[str, Any], queries: Sequence[tuple[str, str]],
    mode: Mode = "hybrid", label: str = "",
) -> Run:
    ext_of = {synthetic_id(i): ext for i, (ext, _, _) in enumerate(sf.corpus)}
    engine = open_engine(bench_config(data_dir, **search))
    try:
        engine.search(SearchRequest(queries[0][1], mode=mode, page_size=PAGE))  # warm-up
        out = Run(label or _label(search), search, [], [], [], [])
        for qid, text in queries:
            t0 = time.perf_counter()
            res = engine.search(SearchRequest(text, mode=mode, page_size=PAGE))
            out.ms.append((time.perf_counter() - t0) * 1000)
            ranking = [ext_of[h.paper.arxiv_id] for h in res.hits]
            out.ndcg.append(ndcg(ranking, sf.qrels[qid]))
            out.recall.append(recall(ranking, sf.qrels[qid]))
            out.total.append(res.total)
        return out
    finally:
        engine.close()


def _label(search: dict[str, Any]) -> str:
    s = {**BASELINE, **search} if search.get("match_all_up_to") == 1 else search
    if s.get("match_fraction", 1) == 0.0 and s.get("match_all_up_to") == 1:
        words = "any word"
    else:
        words = f"all up to {s['match_all_up_to']}, then {s['match_fraction']:.0%}"
    floor = s.get("semantic_floor", 0.0)
    return f"{words}; floor {floor:g}" if floor else f"{words}; no floor"


def choose(runs: list[Run], base: Run, qids: Sequence[str]) -> tuple[list[list[str]], Run]:
    """Two-fold choice: the smallest median match set within TOLERANCE of the baseline."""
    folds = [fold_of(q) for q in qids]
    rows, picks = [], []
    for f in (0, 1):
        tune = [i for i, x in enumerate(folds) if x != f]
        test = [i for i, x in enumerate(folds) if x == f]
        b_ndcg, b_rec, _ = base.on(tune)
        ok = [r for r in runs if r.on(tune)[0] >= b_ndcg - TOLERANCE
              and r.on(tune)[1] >= b_rec - TOLERANCE]  # fmt: skip
        pick = min(ok, key=lambda r: (r.on(tune)[2], -r.on(tune)[0])) if ok else base
        picks.append(pick)
        tn, tr, tt = pick.on(test)
        bn, br, bt = base.on(test)
        rows.append([
            f"{f + 1} of 2", pick.label, f"{len(tune)} / {len(test)}",
            f"{tn:.4f} ({tn - bn:+.4f})", f"{tr:.4f} ({tr - br:+.4f})", f"{tt:.0f} (was {bt:.0f})",
        ])  # fmt: skip
    return rows, picks[0]


def nonsense_queries(n: int = 50) -> list[str]:
    rng = random.Random(17)
    return [
        " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 9)))
                 for _ in range(rng.randint(1, 3)))
        for _ in range(n)
    ]  # fmt: skip


def nonsense_cosines(data_dir: Path) -> list[float]:
    """The best cosine any paper reaches for each nonsense query."""
    engine = open_engine(bench_config(data_dir))
    try:
        best = []
        for q in nonsense_queries():
            found = engine.data.vectors.search(engine.data.embedder.embed_query(q), 1)
            best.append(found[0][1] if found else 0.0)
        return best
    finally:
        engine.close()


def partial_dir(full: Path, target: Path, share: float) -> None:
    """A copy of the SciFact directory whose vectors cover only ``share`` of the papers."""
    src = DataDir(bench_config(full), create=False)
    dst = DataDir(bench_config(target))
    try:
        rows = src.store.backlog("none", src.store.count())  # every paper: (docid, text, hash)
        papers = src.store.get([d for d, _, _ in rows])
        dst.store.upsert([papers[d] for d, _, _ in rows])
        dst.sync_lexical()
        dst.lexical.close_writer()
        keep = random.Random(int(share * 1000)).sample(range(len(rows)), int(len(rows) * share))
        new_rows = dst.store.backlog(dst.embedder.model_id, len(rows))
        by_id = {papers[d].arxiv_id: src.vectors.vector(d) for d, _, _ in rows}
        chosen = [new_rows[i] for i in sorted(keep)]
        dst_papers = dst.store.get([d for d, _, _ in chosen])
        vecs = np.stack([by_id[dst_papers[d].arxiv_id] for d, _, _ in chosen])
        dst.add_vectors([d for d, _, _ in chosen], [h for _, _, h in chosen], vecs)
        dst.write_manifest()
    finally:
        src.close()
        dst.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="200 claims, a smaller grid")
    ap.add_argument("--skip-coverage", action="store_true")
    args = ap.parse_args()
    sf = load()
    queries = sf.queries[:200] if args.quick else sf.queries
    qids = [q for q, _ in queries]
    d = SearchConfig()
    shipped = {"match_all_up_to": d.match_all_up_to, "match_fraction": d.match_fraction,
               "semantic_floor": d.semantic_floor}  # fmt: skip
    out: list[str] = []
    with tempfile.TemporaryDirectory(prefix="papersift-match-") as tmp:
        data_dir = Path(tmp) / "data"
        info = build(sf, data_dir)
        log(f"match: SciFact built ({info['embed']})")
        base = run(sf, data_dir, BASELINE, queries, label="any word; no floor (before)")
        log(f"match: baseline {base.on(range(len(qids)))}")
        grid: list[dict[str, Any]] = [
            {**BASELINE, "semantic_floor": f} for f in FLOORS
        ] + [{"match_all_up_to": a, "match_fraction": f, "semantic_floor": 0.0} for a, f in MSM]
        if args.quick:
            grid = grid[::2]
        runs = []
        for search in grid:
            runs.append(run(sf, data_dir, search, queries))
            log(f"match: {runs[-1].label}: {runs[-1].on(range(len(qids)))}")
        # Cross the best floors with the best rules (by all-claims size within tolerance).
        full = range(len(qids))
        bn, br, _ = base.on(full)

        def fine(r: Run) -> bool:
            return r.on(full)[0] >= bn - TOLERANCE and r.on(full)[1] >= br - TOLERANCE

        floors = sorted({r.search["semantic_floor"] for r in runs if fine(r)})[-2:]
        rules = sorted(
            [r for r in runs if r.search["match_all_up_to"] > 1 and fine(r)],
            key=lambda r: r.on(full)[2],
        )[:3]
        for rule in rules:
            for fl in floors:
                if fl:
                    search = {**rule.search, "semantic_floor": fl}
                    runs.append(run(sf, data_dir, search, queries))
                    log(f"match: {runs[-1].label}: {runs[-1].on(full)}")
        if shipped not in [r.search for r in runs]:
            runs.append(run(sf, data_dir, shipped, queries))
        rows = []
        for r in [base, *runs]:
            n, rec, size = r.on(full)
            mark = " (shipped)" if r.search == shipped else ""
            rows.append([r.label + mark, f"{n:.4f}", f"{rec:.4f}", f"{n - bn:+.4f}",
                         f"{size:.0f}", f"{np.median(r.ms):.1f}"])  # fmt: skip
        cv_rows, _ = choose(runs, base, qids)
        keyword = {mode: run(sf, data_dir, s, queries, mode=mode, label=f"{mode}, {lab}")
                   for mode, s, lab in (("keyword", BASELINE, "any word"),)}  # fmt: skip
        kw_new = run(sf, data_dir, shipped, queries, mode="keyword", label="keyword, shipped")
        sem_new = run(sf, data_dir, shipped, queries, mode="semantic", label="semantic, shipped")
        sem_old = run(sf, data_dir, BASELINE, queries, mode="semantic", label="semantic, no floor")
        other = [[r.label, f"{r.on(full)[0]:.4f}", f"{r.on(full)[1]:.4f}", f"{r.on(full)[2]:.0f}"]
                 for r in (keyword["keyword"], kw_new, sem_old, sem_new)]  # fmt: skip
        cos = nonsense_cosines(data_dir)
        out += [
            f"SciFact, {len(queries)} train claims, hybrid (convex w={d.convex_weight}, title "
            f"boost {d.title_boost}), one page of {PAGE}; match set = the result's `total`. "
            f"Load average at the end: {load_average()}.",
            table(["rule", "nDCG@10", "R@100", "Δ nDCG@10", "median match set", "p50 ms"], rows),
            "Held-out choice (two folds; on each, the smallest median match set within "
            f"{TOLERANCE} of the baseline's nDCG@10 and R@100 on the tuning half):",
            table(["fold", "chosen on the other half", "claims tune / test",
                   "nDCG@10 held out (Δ)", "R@100 held out (Δ)", "median match set held out"],
                  cv_rows),
            "Other modes:",
            table(["mode, rule", "nDCG@10", "R@100", "median match set"], other),
            f"Nonsense queries ({len(cos)} random letter strings): the best cosine any SciFact "
            f"abstract reaches is median {np.median(cos):.3f}, 95th percentile "
            f"{np.percentile(cos, 95):.3f}, max {max(cos):.3f}.",
        ]
        if not args.skip_coverage:
            cov_rows = []
            for share in COVERAGES:
                part = Path(tmp) / f"part-{share}"
                partial_dir(data_dir, part, share)
                kw = run(sf, part, {}, queries, mode="keyword", label="kw")
                on = {"semantic_min_coverage": 0.0}
                hy = run(sf, part, on, queries, label="hy")
                hw = run(sf, part, {**on, "convex_weight": d.convex_weight * share}, queries,
                         label="hw")
                cov_rows.append([f"{share:.0%}", f"{kw.on(full)[0]:.4f}", f"{hy.on(full)[0]:.4f}",
                                 f"{hw.on(full)[0]:.4f}"])  # fmt: skip
                log(f"match: coverage {share}: {cov_rows[-1]}")
            out += [
                "Partial embedding: vectors for a random share of the abstracts (fixed seed), "
                "shipped match rules, nDCG@10:",
                table(["coverage", "keyword alone", f"hybrid w={d.convex_weight}",
                       "hybrid w x coverage"], cov_rows),
            ]
    print("\n\n".join(out))


if __name__ == "__main__":
    main()
