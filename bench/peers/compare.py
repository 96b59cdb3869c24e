"""Peers side by side with papersift: the same documents, queries and vectors, one process.

    .venv/bin/python -m bench.peers.compare [--sizes 10000,100000] [--peers sqlite_fts5,...]

Latency: every system answers the same queries (3-5 words cut from titles of the corpus),
top 10, in rounds after a warm-up; per query the median, then percentiles over queries.
Peers get our document vectors and, per query, our query vector, embedded inside the timed
call (so every semantic/hybrid figure includes the ~8 ms query embedding, as ours does).
Semantic rows also give recall@10 against an exact scan of the same vectors, and each peer
with a semantic mode is timed a second time asked for its top 100 and cut to 10 (a deeper
HNSW search, nearer our recall). Quality: SciFact (5,183 abstracts, 809 claims), nDCG@10
and Recall@100 per system and mode.
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench import scale_data
from bench.common import CACHE, bench_config, load_average, log, percentile, table
from bench.peers import PEERS, Doc, Peer, Unavailable, load
from bench.peers.base import Vectors
from bench.run_core import cut_queries
from papersift.engine.author_query import author_clause
from papersift.engine.embed import Embedder
from papersift.engine.match import MatchRule, keyword_query
from papersift.engine.query import parse_user_query
from papersift.engine.results import Mode, SearchRequest
from papersift.engine.search import SearchEngine, open_engine
from papersift.engine.store import PaperStore
from papersift.engine.vector_segments import model_dir_name, read_segment

K = 10
WORK = CACHE / "peers-work"
MODES: tuple[Mode, ...] = ("keyword", "semantic", "hybrid")
US = "papersift"
# Our keyword top 10 as arXiv ids and nothing else (no page, snippets, facets or counts of
# facets): the same work a peer's keyword call does, for a like-for-like keyword ratio.
US_IDS = "papersift, ids only"
# A peer's semantic search asked for this many and cut to the top 10: HNSW libraries search
# at least k wide, so a deeper k is how a peer without an ef setting (Typesense 0.24) is
# compared at a recall nearer ours (issue 23: "at the same recall").
DEEP_K = 100


@dataclass
class Timing:
    system: str
    mode: str
    ms: list[float]  # per-query medians
    rankings: list[list[str]]
    build_s: float = 0.0
    size: int = 0
    load: str = field(default_factory=load_average)
    recall: float | None = None  # semantic: recall@10 against an exact search of the vectors


def title_queries(docs: Sequence[Doc], n: int, seed: int = 20240601) -> list[str]:
    """3-5 consecutive title words (lower-cased, no stop word at either end), as run_core."""

    def words(title: str) -> list[str]:
        return [w for w in re.findall(r"[\w-]+", title.lower()) if w != "-"]

    return cut_queries([d.title for d in docs], n, seed, words)


def sample_docs(size: int, limit: int = 20_000) -> list[Doc]:
    """The first ``limit`` papers of a cached scale data directory (for cutting queries)."""
    from papersift.engine.store import PaperStore

    scale_data.ensure(size)
    store = PaperStore(scale_data.data_path(size) / "papers.sqlite", readonly=True)
    try:
        out: list[Doc] = []
        for batch in store.changed_since(0, 5000):
            out.extend(Doc(p.arxiv_id, p.title, p.abstract) for _, p, _ in batch)
            if len(out) >= limit:
                break
        return out[:limit]
    finally:
        store.close()


def scale_corpus(size: int) -> tuple[list[Doc], Vectors, Path]:
    """The documents and vectors of a cached scale data directory, in docid order."""
    meta = scale_data.ensure(size)
    root = scale_data.data_path(size)
    engine = open_engine(bench_config(root))
    try:
        store, emb = engine.data.store, engine.data.embedder
        docs: dict[int, Doc] = {}
        for batch in store.changed_since(0, 20_000):
            for docid, p, _ in batch:
                docs[docid] = Doc(p.arxiv_id, p.title, p.abstract)
        vecs = np.zeros((len(docs), emb.dim), np.float32)
        row = {d: i for i, d in enumerate(sorted(docs))}
        folder = root / "vectors" / model_dir_name(emb.model_id)
        for seg in sorted(folder.glob("seg-*.npz")):
            ids, _, v = read_segment(seg)
            for j, d in enumerate(ids.tolist()):
                if d in row:
                    vecs[row[d]] = v[j]
    finally:
        engine.close()
    log(f"peers: {len(docs):,} documents ({meta['vectors']})")
    return [docs[d] for d in sorted(docs)], vecs, root


def _run(queries: Sequence[str], fn: Callable[[str], list[str]], rounds: int) -> Timing:
    for q in queries[:20]:
        fn(q)  # warm-up: caches, lazy loading
    times: list[list[float]] = [[] for _ in queries]
    rankings: list[list[str]] = [[] for _ in queries]
    for _ in range(rounds):
        for i, q in enumerate(queries):
            t0 = time.perf_counter()
            rankings[i] = fn(q)
            times[i].append((time.perf_counter() - t0) * 1000)
    return Timing("", "", [statistics.median(t) for t in times], rankings)


def _ours(engine: SearchEngine, mode: Mode, k: int) -> Callable[[str], list[str]]:
    def fn(q: str) -> list[str]:
        res = engine.search(SearchRequest(q, mode=mode, page_size=k))
        return [h.paper.arxiv_id for h in res.hits]

    return fn


def _ours_ids(engine: SearchEngine, k: int) -> Callable[[str], list[str]]:
    """Our keyword top ``k`` as arXiv ids: the query parsed and built under the match rule
    as the engine builds it, Tantivy's top ``k``, the store."""
    lex, store, cfg = engine.data.lexical, engine.data.store, engine.config.search
    lookup = {c.lower(): c for c in engine.category_counts()}
    rule = MatchRule(cfg.match_all_up_to, cfg.match_fraction)

    def author(text: str) -> str:
        return author_clause(store, text)

    def fn(q: str) -> list[str]:
        built = keyword_query(lex, parse_user_query(q), rule, categories=lookup, author=author)
        docids, _ = lex.top(built.query, k) if built.query is not None else ([], [])
        return _arxiv_ids(store, docids)

    return fn


def _ours_ids_semantic(engine: SearchEngine, k: int) -> Callable[[str], list[str]]:
    """Our semantic top ``k`` as arXiv ids: the query embedded, the vector index searched
    (the graph above ``ann_above``, as the engine searches it), the store; the work a
    peer's semantic call does with the vector it is handed."""
    emb, vectors, store = engine.data.embedder, engine.data.vectors, engine.data.store

    def fn(q: str) -> list[str]:
        qvec = emb.embed_query(parse_user_query(q).semantic_text)
        return _arxiv_ids(store, [d for d, _ in vectors.search(qvec, k)])

    return fn


def _arxiv_ids(store: PaperStore, docids: list[int]) -> list[str]:
    """The arXiv ids of ``docids`` still in the store, in order."""
    papers = store.get(docids)
    return [papers[d].arxiv_id for d in docids if d in papers]


def _peer_fn(peer: Peer, emb: Embedder, mode: str, k: int) -> Callable[[str], list[str]]:
    if mode == "keyword":
        return lambda q: peer.keyword(q, k)
    if mode == "semantic":
        return lambda q: peer.semantic(emb.embed_query(parse_user_query(q).semantic_text), k)
    return lambda q: peer.hybrid(q, emb.embed_query(parse_user_query(q).semantic_text), k)


def exact_top(
    docs: Sequence[Doc], vecs: Vectors, emb: Embedder, queries: Sequence[str], k: int = K
) -> list[list[str]]:
    """Each query's true top ``k`` by cosine over every document vector (a full scan)."""
    out = []
    for q in queries:
        scores = vecs @ emb.embed_query(parse_user_query(q).semantic_text)
        top = np.argpartition(-scores, k)[:k]
        out.append([docs[i].id for i in top[np.argsort(-scores[top])]])
    return out


def recall(rankings: Sequence[Sequence[str]], exact: Sequence[Sequence[str]], k: int = K) -> float:
    """Mean share of the true top ``k`` found in each ranking's first ``k``."""
    return statistics.fmean(
        len(set(r[:k]) & set(e[:k])) / k for r, e in zip(rankings, exact, strict=True)
    )


def latency(size: int, peers: Sequence[str], n_queries: int, rounds: int) -> list[Timing]:
    docs, vecs, root = scale_corpus(size)
    queries = title_queries(docs, n_queries)
    out: list[Timing] = []
    engine = open_engine(bench_config(root))
    try:
        exact = exact_top(docs, vecs, engine.data.embedder, queries)
        engine.search(SearchRequest(queries[0], mode="hybrid"))  # starts the facet table
        engine.facet_table.wait()  # time the steady state
        for mode in MODES:
            log(f"peers: {US} {mode} at {len(docs):,}")
            t = _run(queries, _ours(engine, mode, K), rounds)
            t.system, t.mode = US, mode
            out.append(t)
        log(f"peers: {US_IDS} at {len(docs):,}")
        t = _run(queries, _ours_ids(engine, K), rounds)
        t.system, t.mode = US_IDS, "keyword"
        out.append(t)
        log(f"peers: {US_IDS}, semantic, at {len(docs):,}")
        t = _run(queries, _ours_ids_semantic(engine, K), rounds)
        t.system, t.mode = US_IDS, "semantic"
        out.append(t)
        emb = engine.data.embedder
        for module in peers:
            out.extend(_peer_latency(module, docs, vecs, emb, queries, rounds))
    finally:
        engine.close()
    for t in out:
        if t.mode == "semantic" and t.rankings:
            t.recall = recall(t.rankings, exact)
    return out


def with_peer(module: str, docs: Sequence[Doc], vecs: Vectors | None) -> tuple[Peer, float]:
    cls = load(module)
    work = WORK / module
    shutil.rmtree(work, ignore_errors=True)
    peer = cls(work)
    log(f"peers: building {cls.name} ({len(docs):,} documents)")
    t0 = time.perf_counter()
    try:
        peer.build(docs, vecs if "semantic" in cls.modes else None)
    except BaseException:
        peer.close()
        raise
    return peer, time.perf_counter() - t0


def _peer_latency(
    module: str,
    docs: Sequence[Doc],
    vecs: Vectors,
    emb: Embedder,
    queries: Sequence[str],
    rounds: int,
) -> list[Timing]:
    try:
        peer, build_s = with_peer(module, docs, vecs)
    except Unavailable as exc:
        log(f"peers: {module} unavailable: {exc}")
        return [Timing(PEERS[module], "unavailable: " + str(exc), [], [])]
    out = []
    try:
        _settle(peer)
        size = peer.index_bytes()
        for mode in peer.modes:
            log(f"peers: {peer.name} {mode}")
            t = _run(queries, _peer_fn(peer, emb, mode, K), rounds)
            t.system, t.mode, t.build_s, t.size = peer.name, mode, build_s, size
            out.append(t)
        if "semantic" in peer.modes:
            log(f"peers: {peer.name} semantic, top {K} of {DEEP_K}")
            deep = _peer_fn(peer, emb, "semantic", DEEP_K)
            t = _run(queries, lambda q: deep(q)[:K], rounds)
            t.system, t.mode = f"{peer.name}, top {K} of {DEEP_K}", "semantic"
            t.build_s, t.size = build_s, size
            out.append(t)
    except Exception as exc:  # a peer that breaks mid-run is reported, the rest go on
        log(f"peers: {peer.name} failed: {type(exc).__name__}: {exc}")
        out.append(Timing(peer.name, f"failed: {type(exc).__name__}: {exc}", [], []))
    finally:
        peer.close()
        shutil.rmtree(WORK / module, ignore_errors=True)
    return out


def _settle(peer: Peer) -> None:
    """Wait until a server peer's process is idle after its build (Typesense goes on
    indexing in the background once the import has returned), so its searches are not
    timed beside its own indexing."""
    proc = getattr(peer, "proc", None)
    if proc is not None:
        from bench.search_cpu import wait_idle

        log(f"peers: {peer.name} idle {wait_idle(proc.pid):.0f} s after its build")


def overlap(a: Sequence[str], b: Sequence[str], k: int = K) -> float:
    return len(set(a[:k]) & set(b[:k])) / k if b else 0.0


def latency_table(timings: Sequence[Timing]) -> str:
    ours = {t.mode: t for t in timings if t.system == US}
    ids_only = {t.mode: t for t in timings if t.system == US_IDS and t.ms}
    rows = []
    for t in timings:
        if not t.ms:
            rows.append([t.system, t.mode, "", "", "", "", "", "", "", "", "", t.load])
            continue
        base = ours[t.mode]
        p50 = percentile(t.ms, 50)
        ratio = p50 / percentile(base.ms, 50)
        like = ""  # against our ids-only figure of the mode, the same work a peer does
        if t.mode in ids_only and t.system not in (US, US_IDS):
            like = f"{p50 / percentile(ids_only[t.mode].ms, 50):.2f}"
        ov = statistics.fmean(overlap(a, b) for a, b in zip(t.rankings, base.rankings, strict=True))
        rows.append([
            t.system,
            t.mode,
            f"{p50:.2f}",
            f"{percentile(t.ms, 95):.2f}",
            f"{percentile(t.ms, 99):.2f}",
            "1.00" if t.system == US else f"{ratio:.2f}",
            like,
            "" if t.system == US else f"{ov:.2f}",
            f"{t.build_s:.1f}" if t.build_s else "",
            f"{t.size / 2**20:.0f} MB" if t.size else "",
            "" if t.recall is None else f"{t.recall:.3f}",
            t.load,
        ])  # fmt: skip
    return table(
        ["system", "mode", "p50 ms", "p95 ms", "p99 ms", "p50 vs ours",
         "p50 vs ours, ids only", "top-10 overlap with ours", "build s", "index size",
         "semantic recall@10", "load at end"],
        rows,
    )  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--skip-quality", action="store_true")
    args = ap.parse_args()
    peers = [p for p in args.peers.split(",") if p]
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"\n{scale_data.label(size)}\n")
        print(latency_table(latency(size, peers, args.queries, args.rounds)))
    if not args.skip_quality:
        from bench.peers.quality import quality

        print(table(["system", "mode", "nDCG@10", "R@100"], quality(peers)))


if __name__ == "__main__":
    main()
