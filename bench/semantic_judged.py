"""Which of hybrid's semantic-only matches are relevant, by what the rule can see of them.

    .venv/bin/python bench/semantic_judged.py [--config config.toml] [--scifact] [--write]
        [--judgments bench/judgments/demo-semantic-heldout.tsv]

``bench/judgments/demo-semantic.tsv`` holds blind relevance judgments of papers that hybrid
search on the demo corpus admitted by meaning only (not keyword matches), under the match
rule of issue 17 (gate, floor, band; no z-score). For each judged paper this recomputes,
with the engine's own model and vectors, its semantic rank, its cosine similarity, its gap
to the best candidate, and its z-score over the query's similarity to the whole corpus
(``engine.background``), and prints the share judged relevant by bands of each: the feature
that separates relevant from not is the one a rule should cut on. Then, per judged query,
the semantic and hybrid totals at several values of ``[search] semantic_zscore``.

``--scifact`` adds the SciFact check the default was chosen on (bench/scifact.py's train
claims, hybrid and semantic, nDCG@10 and Recall@100 at each z-score). Run it on a data
directory whose papers are all embedded (``make serve``'s demo directory is, once served).

``--judgments`` reads another file of judgments: ``demo-semantic-heldout.tsv`` holds those of
session 29, made on new queries to check the z-score of 3 that date-sorted hybrid search asks
of a match by meaning alone (``[search] semantic_zscore_sorted``), which session 28's
judgments suggested. Its tables go to their own section of RESULTS.md, with each query's
hybrid totals in relevance and in date order under the default rules.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import itertools
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, load_average, machine_info, publish, table
from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.engine.results import Mode, SearchRequest
from papersift.engine.search import open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "demo-semantic.tsv"
ZSCORES = (0.0, 1.5, 2.0, 2.5, 3.0)
BANDS = {
    "semantic rank": (1, 11, 31, 101, 301, 1001),
    "gap to the best": (0.0, 0.1, 0.2, 0.25, 0.31),
    "z-score": (-10.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 20.0),
}


def read_judgments(path: Path = JUDGMENTS) -> list[tuple[str, str, int]]:
    """(query, arXiv id, 1 or 0) of every judged paper, each pair once (the first round's
    judgment where both rounds drew it)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = csv.DictReader((line for line in fh if not line.startswith("#")), delimiter="\t")
        seen: dict[tuple[str, str], int] = {}
        for row in rows:
            seen.setdefault((row["query"], row["arxiv_id"]), int(row["relevant"]))
    return [(q, a, r) for (q, a), r in seen.items()]


def features(config: Config, judged: list[tuple[str, str, int]]) -> list[dict[str, float]]:
    """Each judged paper's rank, similarity, gap to the best and z-score for its query."""
    out = []
    with open_engine(config) as engine:
        data, n = engine.data, engine.config.search.candidates
        background = data.vectors.background()
        assert background is not None, "no vectors in this data directory"
        by_query: dict[str, list[tuple[str, int]]] = defaultdict(list)
        for q, arxiv_id, rel in judged:
            by_query[q].append((arxiv_id, rel))
        for q, papers in by_query.items():
            qvec = data.embedder.embed_query(q)
            ranked = data.vectors.ranking(qvec, n)
            mean, spread = background.of(qvec)
            position = {int(d): i for i, d in enumerate(ranked.ids)}
            best = float(ranked.scores[0])
            for arxiv_id, rel in papers:
                docid = data.store.docid_of(arxiv_id)
                at = position.get(docid) if docid is not None else None
                if at is None:  # no longer a candidate (the corpus changed): not counted
                    continue
                sim = float(ranked.scores[at])
                out.append({
                    "semantic rank": at + 1, "gap to the best": best - sim,
                    "z-score": (sim - mean) / spread, "relevant": rel,
                })  # fmt: skip
    return out


def precision_tables(rows: list[dict[str, float]]) -> str:
    parts = []
    for name, edges in BANDS.items():
        body = []
        for lo, hi in itertools.pairwise(edges):
            sel = [r["relevant"] for r in rows if lo <= r[name] < hi]
            if sel:
                share = f"{sum(sel) / len(sel):.0%}"
                body.append([f"[{lo:g}, {hi:g})", f"{int(sum(sel))} of {len(sel)}", share])
        parts.append(table([name, "judged relevant", "share"], body))
    return "\n\n".join(parts)


def totals(config: Config, queries: list[str]) -> str:
    rows = []
    for z in ZSCORES:
        search = dataclasses.replace(config.search, semantic_zscore=z, cache_size=0)
        with open_engine(dataclasses.replace(config, search=search)) as engine:
            for i, q in enumerate(queries):
                sem, hyb = (engine.search(SearchRequest(q, mode=m, page_size=1)).total
                            for m in ("semantic", "hybrid"))  # fmt: skip
                if z == ZSCORES[0]:
                    kw = engine.search(SearchRequest(q, mode="keyword", page_size=1)).total
                    rows.append([q, f"{kw:,}"])
                rows[i].append(f"{sem:,} / {hyb:,}")
    head = ["query", "keyword", *(f"z {z:g}: semantic / hybrid" for z in ZSCORES)]
    return table(head, rows)


def sorted_totals(config: Config, queries: list[str]) -> str:
    """Per query, under the default rules: keyword, hybrid in relevance order, hybrid
    sorted newest first (``[search] semantic_zscore_sorted``)."""
    rows = []
    search = dataclasses.replace(config.search, cache_size=0)
    with open_engine(dataclasses.replace(config, search=search)) as engine:
        for q in queries:
            kw, rel, new = (
                engine.search(SearchRequest(q, mode=m, sort=s, page_size=1)).total
                for m, s in (("keyword", "relevance"), ("hybrid", "relevance"),
                             ("hybrid", "newest"))
            )  # fmt: skip
            rows.append([q, f"{kw:,}", f"{rel:,}", f"{new:,}"])
    z = config.search.semantic_zscore_sorted
    head = ["query", "keyword", "hybrid, relevance", f"hybrid, newest first (z {z:g})"]
    return table(head, rows)


def scifact() -> str:
    from bench.scifact import RunSpec, build, load, run

    sf = load()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "scifact"
        build(sf, folder)
        modes: tuple[Mode, ...] = ("hybrid", "semantic")
        for mode in modes:
            base = None
            for z in ZSCORES:
                spec = RunSpec(f"{mode} z {z}", mode, {"semantic_zscore": z})
                res = run(sf, folder, spec, sf.queries)
                base = base or res
                ndcg, recall = res.mean_ndcg, res.mean_recall
                rows.append([
                    mode, f"{z:g}", f"{ndcg:.4f}", f"{ndcg - base.mean_ndcg:+.4f}",
                    f"{recall:.4f}", f"{recall - base.mean_recall:+.4f}",
                ])  # fmt: skip
    head = ["mode", "z-score", "nDCG@10", "change", "Recall@100", "change"]
    return f"SciFact, {len(sf.queries)} train claims, one page of 100:\n\n" + table(head, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", default="config.toml", help="the demo data directory's config")
    ap.add_argument("--scifact", action="store_true", help="also the SciFact check")
    ap.add_argument("--write", action="store_true", help="write the tables into RESULTS.md")
    ap.add_argument("--judgments", type=Path, default=JUDGMENTS, help="the judgments to read")
    args = ap.parse_args()
    config = load_config(args.config)
    source = args.judgments.resolve()
    judged = read_judgments(source)
    rows = features(config, judged)
    queries = list(dict.fromkeys(q for q, _, _ in judged))
    relevant = sum(r["relevant"] for r in rows)
    info = machine_info()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = (
        f"`.venv/bin/python bench/semantic_judged.py{' --scifact' if args.scifact else ''}"
        f"{'' if source == JUDGMENTS.resolve() else ' --judgments ' + str(args.judgments)}` "
        f"({stamp}, revision {info['revision']}, load {load_average()}): {len(rows)} judged "
        f"semantic-only matches of {len(queries)} queries ({relevant} relevant, "
        f"{relevant / len(rows):.0%}), from {source.relative_to(ROOT)}.\n\n"
        + precision_tables(rows)
    )
    held_out = source != JUDGMENTS.resolve()
    if held_out:
        body += "\n\nTotals under the default rules:\n\n" + sorted_totals(config, queries)
    else:
        body += "\n\nTotals by `[search] semantic_zscore`:\n\n" + totals(config, queries)
    if args.scifact:
        body += "\n\n" + scifact()
    publish("semantic-judged-heldout" if held_out else "semantic-judged", body, args.write)


if __name__ == "__main__":
    main()
