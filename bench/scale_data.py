"""Cached data directories at 10k, 100k and the full benchmark snapshot, for bench/scale.py.

    .venv/bin/python bench/scale_data.py [--sizes 10000,100000,0] [--fresh]
    .venv/bin/python bench/scale_data.py --export-real DIR   # a directory embedded for real

Each size is the first N papers of ``arxiv-snapshot-bench.jsonl.xz`` (0 = all 672,286),
imported through ``indexer.build.import_files`` into ``bench/.cache/scale-<N>/`` once; the
import's wall time and sizes are kept in ``scale-<N>.json`` next to it. Vectors:

* 10k: the first ``--max-real`` papers (default all 10,000) embedded for real
  (``embed_backlog``, the configured model); the real vectors are also saved by arXiv id in
  ``scale-vectors-10000.npz`` so a rebuilt directory skips the embedding.
* 100k: real vectors when ``scale-vectors-100000.npz`` exists. Embedding 100k papers takes
  about an hour here, so it is done once outside this script, as a lab would::

      PAPERSIFT_DATA_DIR=bench/.cache/real-100k papersift import --limit 100000 BENCH_FILE
      PAPERSIFT_DATA_DIR=bench/.cache/real-100k papersift index
      .venv/bin/python bench/scale_data.py --export-real bench/.cache/real-100k
      .venv/bin/python bench/scale_data.py --sizes 100000 --fresh

* every paper still without a vector (all of them past the real caches; the full snapshot's
  first 100k get the real ones when it is rebuilt): paper ``i`` gets real vector ``i mod R``
  of the 10k cache (R real ones) plus Gaussian noise (sigma 0.02 per component),
  re-normalised. Flat FAISS latency depends only on count and dimension, so the latency
  figures hold; recycled vectors are far more clustered than real ones, so graph recall and
  semantic *relevance* at those sizes do not (quality is measured on SciFact).
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

REAL = 10_000  # papers embedded for real by this script
REAL_CACHES = (100_000,)  # sizes whose real vectors may come from --export-real
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


def require(size: int) -> None:
    """Exit with one line saying how to build it unless the scale directory of ``size`` is
    complete (the check of the scripts that only read one)."""
    if read_meta(size) is None:
        sys.exit(f"no complete scale directory {data_path(size)}: "
                 f"run bench/scale_data.py --sizes {size}")  # fmt: skip


def _write_meta(size: int, meta: dict[str, Any]) -> None:
    tmp = meta_path(size).with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, meta_path(size))


def real_vectors_path(count: int = REAL) -> Path:
    return CACHE / f"scale-vectors-{count}.npz"


def _save_real(path: Path, ids: list[str], vectors: np.ndarray) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, ids=np.asarray(ids), vectors=vectors.astype(np.float32))
    os.replace(tmp, path)


def export_real(source: Path) -> Path:
    """Save the current vectors of ``source``'s model by arXiv id as the real-vector cache of
    its paper count (``scale-vectors-<N>.npz``); every paper must have one."""
    data = DataDir(bench_config(source))
    try:
        model = data.embedder.model_id
        papers, have = data.store.count(), data.store.embedded_count(model)
        if have < papers:
            sys.exit(f"{source}: {have:,} of {papers:,} papers embedded; run `papersift index`")
        current = data.store.text_hashes(list(range(1, papers + 1)))
        found: dict[int, np.ndarray] = {}
        for seg in data.vectors.segments():  # later segments hold the later vectors
            seg_ids, hashes, vectors = data.vectors.read_segment(seg)
            for d, h, v in zip(seg_ids.tolist(), hashes, vectors, strict=True):
                if current.get(d) == h:
                    found[d] = v
        docids = sorted(found)
        if len(docids) != papers:
            sys.exit(f"{source}: {len(docids):,} current vectors for {papers:,} papers")
        by_docid = data.store.get(docids)
        ids = [by_docid[d].arxiv_id for d in docids]
    finally:
        data.close()
    target = real_vectors_path(papers)
    _save_real(target, ids, np.stack([found[d] for d in docids]))
    log(f"scale: {papers:,} real vectors of {model} saved as {target.name}")
    return target


def _add_cached(data: DataDir, cache: Path, size: int) -> int:
    """Give every paper of ``data`` whose arXiv id is in ``cache`` its cached real vector, if
    the configured model reproduces the cache on three of them; the papers added (0: none)."""
    emb = data.embedder
    with np.load(cache, allow_pickle=False) as z:
        by_id = dict(zip((str(i) for i in z["ids"]), z["vectors"], strict=True))
    rows = data.store.backlog(emb.model_id, size or data.store.count())
    papers = data.store.get([d for d, _, _ in rows])
    text = {d: t for d, t, _ in rows}
    hit = [(d, h, by_id[papers[d].arxiv_id]) for d, _, h in rows if papers[d].arxiv_id in by_id]
    if not hit:
        return 0
    probe = [hit[0], hit[len(hit) // 2], hit[-1]]
    check = emb.embed([text[d] for d, _, _ in probe])
    if min(float(np.dot(c, v)) for c, (_, _, v) in zip(check, probe, strict=True)) < 0.999:
        log(f"scale: {cache.name} does not match the configured model; not used")
        return 0
    for i in range(0, len(hit), CHUNK):
        part = hit[i : i + CHUNK]
        data.add_vectors([d for d, _, _ in part], [h for _, h, _ in part],
                         np.stack([v for *_, v in part]))  # fmt: skip
    log(f"scale: {len(hit):,} real vectors from {cache.name}")
    return len(hit)


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
        if _add_cached(data, cache, REAL):
            return
        log("scale: embedding again")
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
    _save_real(cache, [papers[d].arxiv_id for d in docids], vectors)


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
        f"all {real:,} real (embedded from the papers' text)"
        if not done
        else (
            f"{real:,} real (embedded from the papers' text), {done:,} recycled: paper i gets real "
            f"vector i mod {len(base):,} (of the {len(base):,} real ones of the 10k directory) "
            f"plus N(0, {NOISE}) noise per component, re-normalised"
        )
    )


def ensure(
    size: int, *, fresh: bool = False, import_only: bool = False, max_real: int = REAL
) -> dict[str, Any]:
    """The metadata of a complete cached data directory of ``size`` papers, built if needed."""
    meta = None if fresh else read_meta(size)
    if meta is not None:
        return meta
    old = json.loads(meta_path(size).read_text()) if meta_path(size).exists() else None
    newer = (old or {}).get("schema_version")
    if not fresh and isinstance(newer, int) and newer > SCHEMA_VERSION:
        # A newer checkout built it (an A/B worktree sharing bench/.cache): hours to rebuild.
        sys.exit(
            f"{data_path(size)} is index schema {newer}, this checkout reads "
            f"{SCHEMA_VERSION}: give this checkout a bench/.cache of its own (or --fresh)"
        )
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
            for n in REAL_CACHES:
                if (size == 0 or n <= size) and real_vectors_path(n).exists():
                    _add_cached(data, real_vectors_path(n), n)
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
    ap.add_argument(
        "--export-real",
        type=Path,
        metavar="DIR",
        help="save DIR's vectors (every paper embedded) as a real-vector cache",
    )
    args = ap.parse_args()
    if args.export_real:
        export_real(args.export_real)
        return
    for size in (int(s) for s in args.sizes.split(",")):
        meta = ensure(size, fresh=args.fresh, import_only=args.import_only, max_real=args.max_real)
        log(f"scale: {label(size)} ready: {json.dumps(meta)}")


if __name__ == "__main__":
    main()
