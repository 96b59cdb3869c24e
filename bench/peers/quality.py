"""Retrieval quality of papersift and each peer on SciFact: same fields, queries, vectors."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench import scifact
from bench.common import bench_config, log
from bench.peers import PEERS, Doc, Unavailable
from bench.peers.compare import US, WORK, with_peer
from papersift.core.config_search import SearchConfig
from papersift.engine.query import parse_user_query
from papersift.engine.search import open_engine

DEFAULT_WEIGHT = SearchConfig().convex_weight


def quality(
    peers: Sequence[str], n_queries: int | None = None, *, ours: bool = True
) -> list[list[str]]:
    """nDCG@10 / R@100 on SciFact for our modes and every peer's modes (the first
    ``n_queries`` claims, all by default)."""
    sf = scifact.load()
    queries = sf.queries[:n_queries] if n_queries else sf.queries
    docs = [Doc(ext, t, a) for ext, t, a in sf.corpus]
    rows: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="papersift-peers-sf-") as tmp:
        data_dir = Path(tmp) / "data"
        scifact.build(sf, data_dir)
        specs = [
            scifact.RunSpec("keyword", "keyword"),
            scifact.RunSpec("semantic", "semantic"),
            scifact.RunSpec("hybrid RRF k=60", "hybrid", {"fusion": "rrf"}),
            scifact.RunSpec(f"hybrid convex w={DEFAULT_WEIGHT} (default)", "hybrid"),
        ]
        for spec in specs if ours else []:
            log(f"peers: SciFact {US} {spec.label}")
            r = scifact.run(sf, data_dir, spec, queries)
            rows.append([US, spec.label, f"{r.mean_ndcg:.4f}", f"{r.mean_recall:.4f}"])
        engine = open_engine(bench_config(data_dir))
        emb = engine.data.embedder
        qvecs = [
            emb.embed_query(parse_user_query(text).semantic_text or text) for _, text in queries
        ]
        cached = scifact._read_cache(scifact._vector_cache(sf, emb.model_id, emb.max_length))
        engine.close()
    if cached is None:
        return rows
    vecs = np.stack([cached[ext] for ext, _, _ in sf.corpus]).astype(np.float32)
    for module in peers:
        try:
            peer, _ = with_peer(module, docs, vecs)
        except Unavailable as exc:
            rows.append([PEERS[module], f"unavailable: {exc}", "", ""])
            continue
        try:
            for mode in peer.modes:
                log(f"peers: SciFact {peer.name} {mode}")
                nd, rc = [], []
                for (qid, text), qv in zip(queries, qvecs, strict=True):
                    if mode == "keyword":
                        ranking = peer.keyword(text, 100)
                    elif mode == "semantic":
                        ranking = peer.semantic(qv, 100)
                    else:
                        ranking = peer.hybrid(text, qv, 100)
                    nd.append(scifact.ndcg(ranking, sf.qrels[qid]))
                    rc.append(scifact.recall(ranking, sf.qrels[qid]))
                rows.append([peer.name, mode, f"{np.mean(nd):.4f}", f"{np.mean(rc):.4f}"])
        except Exception as exc:
            rows.append([peer.name, f"failed: {type(exc).__name__}: {exc}", "", ""])
        finally:
            peer.close()
            shutil.rmtree(WORK / module, ignore_errors=True)
    return rows
