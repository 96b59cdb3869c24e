"""The cluster path against in-process embedding on the same machine (issue 18).

A real ``dask scheduler`` and two ``dask worker --nthreads 1`` processes on 127.0.0.1 (each
task's onnxruntime on one thread), against ``embed_backlog`` in this process (onnxruntime's
default threads: both cores). Each round copies one imported data directory twice and
embeds it both ways, in alternating order; the models are loaded before timing on both
sides (the workers by a warm-up run), so the figures compare the embedding, the transport
and the writes. On 2 cores the cluster cannot be faster; its overhead is the question.

    .venv/bin/python bench/cluster_bench.py [--papers 384] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_config
from papersift.engine.datadir import DataDir
from papersift.indexer.build import embed_backlog, import_files
from papersift.indexer.embed_cluster import embed_on_cluster
from papersift.indexer.identity_refresh import refresh_people
from tests.cluster_kit import start_cluster
from tests.corpus import demo_records, write_jsonl


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=384)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=64, help="papers per cluster task")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cluster-bench-") as tmp_name:
        tmp = Path(tmp_name)
        records = demo_records()
        step = max(1, len(records) // args.papers)
        source = write_jsonl(tmp / "papers.jsonl", records[::step][: args.papers])
        template = tmp / "template"
        data = DataDir(bench_config(template))
        import_files(data, [source])
        refresh_people(data)
        data.indexing_embedder.load()  # builds the fused graph into template/models
        data.close()

        t0 = time.perf_counter()
        cluster = start_cluster(tmp / "cluster", template / "models")
        start_s = time.perf_counter() - t0
        try:
            warm = copy(template, tmp / "warm")
            warm_data = DataDir(bench_config(warm), create=False)
            t0 = time.perf_counter()
            embed_on_cluster(warm_data, cluster.address, chunk=args.chunk, limit=args.chunk * 2)
            warm_s = time.perf_counter() - t0
            warm_data.close()
            rates: dict[str, list[float]] = {"in-process": [], "cluster": []}
            load0 = os.getloadavg()[0]
            for r in range(args.rounds):
                order = ["in-process", "cluster"] if r % 2 == 0 else ["cluster", "in-process"]
                for how in order:
                    target = copy(template, tmp / f"{how}-{r}")
                    d = DataDir(bench_config(target), create=False)
                    if how == "in-process":
                        d.indexing_embedder.load()  # the workers have theirs loaded
                    t0 = time.perf_counter()
                    if how == "cluster":
                        n = embed_on_cluster(d, cluster.address, chunk=args.chunk)
                    else:
                        n = embed_backlog(d)
                    rates[how].append(n / (time.perf_counter() - t0))
                    d.close()
                    shutil.rmtree(target)
            load1 = os.getloadavg()[0]
        finally:
            cluster.stop()
    inproc, clus = statistics.median(rates["in-process"]), statistics.median(rates["cluster"])
    print(
        f"{args.papers} demo papers, {args.rounds} rounds alternating, chunk {args.chunk}, "
        f"load {load0:.1f} before / {load1:.1f} after; cluster start {start_s:.1f} s, "
        f"first batches (workers load the model) {warm_s:.1f} s"
    )
    print("| path | papers/s (median) | rounds |")
    print("|---|---|---|")
    for how, vals in rates.items():
        print(f"| {how} | {statistics.median(vals):.1f} | {', '.join(f'{v:.1f}' for v in vals)} |")
    print(f"\ncluster / in-process: {clus / inproc:.3f} (overhead {1 - clus / inproc:+.1%})")


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


if __name__ == "__main__":
    main()
