"""Benchmark of engine.embed: papers/s, query latency and peak memory, as shipped vs float32.

Each configuration runs in a fresh process, so its peak RSS is its own. The papers are sorted
by token count and cut into batches as ``Embedder.embed`` does; each batch runs ``--repeats``
times. "papers/s" is the first run of every batch (end to end, as the machine was), "best" the
fastest run of every batch: on a machine shared with other jobs it estimates the undisturbed
speed, the way ``timeit`` takes the minimum.

    .venv/bin/python bench/embed_bench.py [--papers 512] [--batches 16,8] [--repeats 3]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tokenizers import Tokenizer

from engine.embed import Embedder, default_model_path, default_tokenizer_path
from papersift.resources import demo_corpus_path


def demo_texts(n: int) -> tuple[list[str], list[str]]:
    """``n`` paper texts (title. abstract, as the indexer embeds them) spread over the demo
    corpus, and short queries made of the first words of other titles."""
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh]
    step = max(1, len(records) // n)
    papers = [" ".join(f"{r['title']}. {r['abstract']}".split()) for r in records[::step][:n]]
    queries = [" ".join(r["title"].split()[:4]) for r in records[step // 2 :: step][:200]]
    return papers, queries


def one(args: argparse.Namespace, variant: str, batch: int) -> dict[str, Any]:
    """Measure one configuration in this process."""
    texts, queries = demo_texts(args.papers)
    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.enable_truncation(args.max_length)
    tok.no_padding()
    texts.sort(key=lambda t: len(tok.encode(t).ids))
    t0 = time.perf_counter()
    emb = Embedder(
        default_model_path(),
        default_tokenizer_path(),
        max_length=args.max_length,
        batch_size=batch,
        threads=args.threads,
        cache_dir=args.cache_dir if variant == "float32" else None,
    )
    load_s = time.perf_counter() - t0
    emb.embed(texts[-batch:])  # warm-up
    first, best, c0 = 0.0, 0.0, time.process_time()
    for start in range(0, len(texts), batch):
        times = []
        for _ in range(args.repeats):
            b0 = time.perf_counter()
            emb.embed(texts[start : start + batch])
            times.append(time.perf_counter() - b0)
        first, best = first + times[0], best + min(times)
    cpu = (time.process_time() - c0) / args.repeats
    lat = []
    for q in queries:
        q0 = time.perf_counter()
        emb.embed_query(q)
        lat.append((time.perf_counter() - q0) * 1000)
    cuts = statistics.quantiles(lat, n=20)
    return {
        "papers_s": len(texts) / first,
        "best_papers_s": len(texts) / best,
        "cpu_papers_s": len(texts) / cpu,
        "load_s": load_s,
        "q_p50": statistics.median(lat),
        "q_p95": cuts[18],
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=512)
    ap.add_argument("--batches", default="16,8")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--one", nargs=2, metavar=("VARIANT", "BATCH"), help=argparse.SUPPRESS)
    ap.add_argument("--cache-dir", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args, args.one[0], int(args.one[1]))))
        return

    configs = [(v, b) for v in ("shipped", "float32") for b in map(int, args.batches.split(","))]
    load_before = os.getloadavg()[0]
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        # Build the float32 graph once up front so no timed run pays for the conversion.
        Embedder(default_model_path(), default_tokenizer_path(), cache_dir=Path(tmp))
        for variant, batch in configs:
            cmd = [sys.executable, __file__, "--one", variant, str(batch), "--cache-dir", tmp]
            for opt in ("papers", "max_length", "repeats", "threads"):
                cmd += [f"--{opt.replace('_', '-')}", str(getattr(args, opt))]
            out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
            runs[(variant, batch)] = json.loads(out.splitlines()[-1])

    print(
        f"{args.papers} demo papers (title. abstract), max_length {args.max_length}, "
        f"threads {args.threads}, {os.cpu_count()} CPUs, load average "
        f"{load_before:.1f} before / {os.getloadavg()[0]:.1f} after"
    )
    head = ("graph", "batch", "papers/s", "best papers/s", "papers/cpu-s", "load s",
            "query p50 ms", "query p95 ms", "peak RSS MB")  # fmt: skip
    keys = ("papers_s", "best_papers_s", "cpu_papers_s", "load_s", "q_p50", "q_p95", "peak_mb")
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("-" * (len(h) + 2) for h in head) + "|")
    for (variant, batch), r in runs.items():
        cells = [variant, str(batch)] + [
            f"{r[k]:.{2 if k == 'load_s' else 0 if k == 'peak_mb' else 1}f}" for k in keys
        ]
        print("| " + " | ".join(c.rjust(len(h)) for c, h in zip(cells, head, strict=True)) + " |")


if __name__ == "__main__":
    main()
