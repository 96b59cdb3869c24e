"""Where the embedding model's time goes, per operator, and what the CPU could do at best.

    .venv/bin/python bench/embed_ops.py [--papers 64] [--batch 8] [--rounds 2]

Runs the fused float32 graph (the default) and its int8 graph (``[embedding] quantize``),
both built into ``bench/.cache/quant/fused`` as ``bench/quant_bench.py`` builds them, on one
onnxruntime thread with its profiler on, over demo papers (title. abstract, 256 tokens at
most, batches sorted by length as ``Embedder.embed`` runs them). Prints each operator's
share of the kernel time and its milliseconds per paper, and the multiply-adds per paper
the model's shapes imply (the linear layers and the attention core), so the measured rate
can be set against the CPU's peak. One thread: the figures are per core and do not depend
on how well two threads share the work.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.embed_bench import demo_texts
from bench.quant_bench import QUANT, fused_graph
from papersift.engine.model_id import default_tokenizer_path
from papersift.engine.quantize import quantized_graph

# all-MiniLM-L6-v2: 6 layers of width 384, feed-forward 1,536.
LAYERS, WIDTH, FFN = 6, 384, 1536
LINEAR_MACS_PER_TOKEN = LAYERS * (4 * WIDTH * WIDTH + 2 * WIDTH * FFN)  # QKV, out, FFN


def batches(texts: list[str], batch: int) -> list[dict[str, np.ndarray]]:
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(default_tokenizer_path()))
    tok.enable_truncation(256)
    enc = sorted((e.ids for e in tok.encode_batch(texts)), key=len)
    feeds = []
    for b in range(0, len(enc), batch):
        rows = enc[b : b + batch]
        ids = np.zeros((len(rows), max(map(len, rows))), np.int64)
        for r, seq in enumerate(rows):
            ids[r, : len(seq)] = seq
        feeds.append({"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64)})
    return feeds


def op_times(
    graph: Path, feeds: list[dict[str, np.ndarray]], rounds: int
) -> collections.Counter[str]:
    """Microseconds of kernel time per operator type over ``rounds`` passes of ``feeds``."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.enable_profiling = True
    so.profile_file_prefix = str(QUANT / "ops-profile")
    session = ort.InferenceSession(str(graph), so, providers=["CPUExecutionProvider"])
    names = {i.name for i in session.get_inputs()}
    for _ in range(rounds):
        for feed in feeds:
            extra = {"token_type_ids": np.zeros_like(feed["input_ids"])}
            session.run(None, feed | (extra if "token_type_ids" in names else {}))
    profile = Path(session.end_profiling())
    totals: collections.Counter[str] = collections.Counter()
    for event in json.loads(profile.read_text()):
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            totals[event["args"]["op_name"]] += event["dur"]
    profile.unlink()
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--papers", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    texts, _ = demo_texts(args.papers)
    feeds = batches(texts, args.batch)
    tokens = [int(f["attention_mask"].sum(axis=1).mean()) for f in feeds]
    real = sum(int(f["attention_mask"].sum()) for f in feeds) / len(texts)
    padded = sum(f["input_ids"].size for f in feeds) / len(texts)
    core = sum(
        LAYERS * 2 * f["input_ids"].shape[1] ** 2 * WIDTH * len(f["input_ids"]) for f in feeds
    ) / len(texts)
    macs = LINEAR_MACS_PER_TOKEN * padded + core
    print(f"{len(texts)} demo papers, {real:.1f} tokens each ({padded:.1f} with padding; "
          f"batch means {min(tokens)}-{max(tokens)}); multiply-adds per paper: linear layers "
          f"{LINEAR_MACS_PER_TOKEN * padded / 1e9:.2f} G, attention core {core / 1e9:.2f} G, "
          f"{macs / 1e9:.2f} G in all\n")  # fmt: skip
    fused = fused_graph()
    for name, graph in (("float32 (fused)", fused), ("int8", quantized_graph(fused, fused.parent))):
        ops = op_times(graph, feeds, args.rounds)
        total = sum(ops.values())
        per_paper = total / 1000 / (len(texts) * args.rounds)
        print(f"{name}: {per_paper:.1f} ms of kernel time per paper on one thread, "
              f"{macs / per_paper / 1e6:.1f} G multiply-adds/s\n")  # fmt: skip
        print("| operator | share | ms per paper |\n| --- | ---: | ---: |")
        for op, us in ops.most_common():
            if us / total >= 0.001:
                print(f"| {op} | {100 * us / total:.1f}% | "
                      f"{us / 1000 / (len(texts) * args.rounds):.2f} |")  # fmt: skip
        print()


if __name__ == "__main__":
    main()
