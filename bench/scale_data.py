"""Cached data directories at 10k, 100k and the full benchmark snapshot, for bench/scale.py.

    .venv/bin/python bench/scale_data.py [--sizes 10000,100000,0] [--fresh]

Each size is the first N papers of ``arxiv-snapshot-bench.jsonl.xz`` (0 = all 672,286),
imported through ``indexer.build.import_files`` into ``bench/.cache/scale-<N>/`` once; the
import's wall time and sizes are kept in ``scale-<N>.json`` next to it. Vectors:

* 10k: the first ``--max-real`` papers (default all 10,000) embedded for real
  (``embed_backlog``, the configured model); the real vectors are also saved by arXiv id in
  ``scale-vectors-10000.npz`` so a rebuilt directory skips the embedding.
* the rest, and every larger size: embedding 672k papers here takes about 8 hours, so paper
  ``i`` gets real vector ``i mod R`` (R real ones) plus Gaussian noise (sigma 0.02 per
  component), re-normalised. Flat FAISS latency depends only on count and dimension, so the latency
  figures hold; semantic *relevance* at these sizes does not (quality is measured on SciFact).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import CACHE, bench_config, dir_size, load_average, log, machine_info
from bench.run_core import ARXIV_BENCH
from papersift.engine.datadir import LEXICAL_REBUILD_FROM, SCHEMA_VERSION, DataDir
from papersift.indexer.build import embed_backlog, import_files
from papersift.indexer.identity_refresh import refresh_people

REAL = 10_000  # papers embedded for real
SIZES = (10_000, 100_000, 0)  # 0: the whole snapshot
NOISE = 0.02
CHUNK = 50_000


def label(size: int) -> str:
    return "full" if size == 0 else f"{size // 1000}k"


def data_path(size: int) -> Path:
    return CACHE / f"scale-{label(size)}"


def meta_path(size: int) -> Path:
    return CACHE / f"scale-{label(size)}.json"


def read_meta(size: int) -> dict[str, Any] | None:
    path = meta_path(size)
    if not path.exists() or not data_path(size).exists():
        return None
    meta: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("schema_version") in LEXICAL_REBUILD_FROM:
        # Opening the directory rebuilds its keyword index for the current schema.
        log(f"scale: rebuilding the keyword index of {label(size)} for schema {SCHEMA_VERSION}")
        t0 = time.perf_counter()
        DataDir(bench_config(data_path(size))).close()
        meta.update(
            schema_version=SCHEMA_VERSION,
            lexical_bytes=dir_size(data_path(size) / "lexical"),
            lexical_rebuilt=f"{datetime.now(UTC):%Y-%m-%d %H:%M UTC} in "
            f"{time.perf_counter() - t0:.0f} s (schema {SCHEMA_VERSION})",
        )
        _write_meta(size, meta)
    if meta.get("schema_version") != SCHEMA_VERSION or not meta.get("vectors_done"):
        return None
    return meta


def _write_meta(size: int, meta: dict[str, Any]) -> None:
    tmp = meta_path(size).with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, meta_path(size))


def real_vectors_path() -> Path:
    return CACHE / f"scale-vectors-{REAL}.npz"


def _import(size: int) -> dict[str, Any]:
    root = data_path(size)
    shutil.rmtree(root, ignore_errors=True)
    data = DataDir(bench_config(root))
    try:
        log(f"scale: importing {label(size)} from {ARXIV_BENCH.name}")
        t0, c0 = time.perf_counter(), time.process_time()
        report = import_files(data, [ARXIV_BENCH], limit=size or None)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        t1 = time.perf_counter()
        refresh_people(data, progress=sys.stderr.isatty())  # what `papersift index` does first
        people_s = time.perf_counter() - t1
        papers = data.store.count()
    finally:
        data.close()
    meta = {
        "size": size,
        "papers": papers,
        "read": report.read,
        "import_s": round(secs, 2),
        "import_cpu_s": round(cpu, 2),
        "people_s": round(people_s, 2),
        "sqlite_bytes": sum(dir_size(p) for p in root.glob("papers.sqlite*")),
        "lexical_bytes": dir_size(root / "lexical"),
        "built": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load_average": load_average(),
        "revision": machine_info()["revision"],
        "schema_version": SCHEMA_VERSION,
        "vectors_done": False,
    }
    log(f"scale: {papers:,} papers in {secs:.0f} s ({papers / secs:,.0f}/s)")
    _write_meta(size, meta)
    return meta


def _embed_real(data: DataDir, meta: dict[str, Any], max_real: int) -> None:
    """Embed (for real) until ``max_real`` papers of this directory have vectors, then save
    every real vector by arXiv id in the cache; with a valid cache, reuse it instead."""
    cache = real_vectors_path()
    emb = data.embedder
    if cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            by_id = dict(zip((str(i) for i in z["ids"]), z["vectors"], strict=True))
        rows = data.store.backlog(emb.model_id, REAL + 1)
        papers = data.store.get([d for d, _, _ in rows])
        hit = [(d, h, by_id[papers[d].arxiv_id]) for d, _, h in rows if papers[d].arxiv_id in by_id]
        check = emb.embed([next(t for d, t, _ in rows if d == hit[0][0])])[0] if hit else None
        if check is not None and float(np.dot(check, hit[0][2])) > 0.999:
            data.add_vectors(
                [d for d, _, _ in hit], [h for _, h, _ in hit], np.stack([v for *_, v in hit])
            )
            return
        log("scale: real vector cache does not match; embedding again")
    have = data.store.embedded_count(emb.model_id)
    if have < max_real:
        log(f"scale: embedding {max_real - have:,} papers for real")
        t0 = time.perf_counter()
        n = embed_backlog(data, limit=max_real - have, progress=sys.stderr.isatty())
        secs = time.perf_counter() - t0
        meta.update(embed_s=round(secs, 1), embedded=n, embed_load=load_average())
    found = {d: data.vectors.vector(d) for d in range(1, data.store.count() + 1)}
    docids = sorted(d for d, v in found.items() if v is not None)
    papers = data.store.get(docids)
    vectors = np.stack([v for d in docids if (v := found[d]) is not None]).astype(np.float32)
    tmp = cache.with_name(cache.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, ids=np.asarray([papers[d].arxiv_id for d in docids]), vectors=vectors)
    os.replace(tmp, cache)


def _recycled(data: DataDir, meta: dict[str, Any]) -> None:
    """Every paper still without a vector gets a real one, recycled with noise."""
    with np.load(real_vectors_path(), allow_pickle=False) as z:
        base = np.asarray(z["vectors"], np.float32)
    rng = np.random.default_rng(7)
    model = data.embedder.model_id
    real = data.store.embedded_count(model)
    done = 0
    while rows := data.store.backlog(model, CHUNK):
        docids = np.asarray([d for d, _, _ in rows], np.int64)
        vecs = base[(docids - 1) % len(base)] + rng.normal(0, NOISE, (len(rows), base.shape[1]))
        vecs = (vecs / np.linalg.norm(vecs, axis=1, keepdims=True)).astype(np.float32)
        data.add_vectors(docids.tolist(), [h for _, _, h in rows], vecs)
        done += len(rows)
        log(f"scale: {label(meta['size'])}: {done:,} recycled vectors")
    data.vectors.compact(data.store.text_hashes)
    meta["vectors"] = (
        f"{real:,} real (embedded from the papers' text), {done:,} recycled: paper i gets real "
        f"vector i mod {len(base):,} (of the {len(base):,} real ones of the 10k directory) "
        f"plus N(0, {NOISE}) noise per component, re-normalised"
    )


def ensure(
    size: int, *, fresh: bool = False, import_only: bool = False, max_real: int = REAL
) -> dict[str, Any]:
    """The metadata of a complete cached data directory of ``size`` papers, built if needed."""
    meta = None if fresh else read_meta(size)
    if meta is not None:
        return meta
    old = json.loads(meta_path(size).read_text()) if meta_path(size).exists() else None
    if (
        not fresh
        and old
        and old.get("schema_version") == SCHEMA_VERSION
        and data_path(size).exists()
    ):
        meta = old
    else:
        meta = _import(size)
    if import_only:
        return meta
    data = DataDir(bench_config(data_path(size)))
    try:
        if size == REAL:
            _embed_real(data, meta, max_real)
        else:
            ensure(REAL, max_real=max_real)
        _recycled(data, meta)
        data.write_manifest()
        meta["vectors_bytes"] = dir_size(data_path(size) / "vectors")
    finally:
        data.close()
    meta["vectors_done"] = True
    _write_meta(size, meta)
    return meta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--fresh", action="store_true", help="re-import (real vectors stay cached)")
    ap.add_argument("--import-only", action="store_true", help="no vectors yet")
    ap.add_argument("--max-real", type=int, default=REAL, help="papers to embed for real")
    args = ap.parse_args()
    for size in (int(s) for s in args.sizes.split(",")):
        meta = ensure(size, fresh=args.fresh, import_only=args.import_only, max_real=args.max_real)
        log(f"scale: {label(size)} ready: {json.dumps(meta)}")


if __name__ == "__main__":
    main()
