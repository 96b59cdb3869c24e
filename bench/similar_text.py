"""Papers like this text: self-retrieval of pasted abstracts, and the endpoint's latency.

Over the fully embedded demo corpus (bench/.cache/demo-data, built by ``run_core``'s cache
if missing), a seeded sample of papers' own abstracts (without their titles; the papers
were embedded as "title. abstract") is posted to ``POST /api/v1/similar`` on a real uvicorn
server in this process, one request at a time. Reports how often the paper itself comes
first and within the first 10, and the request latency (client side, JSON included).

    .venv/bin/python bench/similar_text.py [--papers 300] [--write]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import httpx

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (
    bench_config,
    load_average,
    log,
    machine_info,
    percentile,
    publish,
    table,
)
from bench.run_core import DEMO_CACHE, ensure_demo_cache
from papersift.engine.search import open_engine
from papersift.server.app import create_app
from tests.web_helpers import serving


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=300)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--write", action="store_true", help="write the section into RESULTS.md")
    ap.add_argument(
        "--partial", action="store_true",
        help="use the demo data directory as far as it is embedded (an interrupted build): "
        "the corpus searched and sampled is then its embedded papers",
    )  # fmt: skip
    args = ap.parse_args()
    if not args.partial:
        ensure_demo_cache(fresh=False)
    config = bench_config(DEMO_CACHE)
    engine = open_engine(config)
    store = engine.data.store
    rows = store.get(list(range(1, store.count() + 1)))
    embedded = sorted(d for d in rows if engine.data.vectors.vector(d) is not None)
    sample = random.Random(args.seed).sample(embedded, args.papers)
    top1 = top10 = 0
    latencies: list[float] = []
    load_start = load_average()
    with serving(create_app(engine, config)) as url, httpx.Client(base_url=url, timeout=60) as c:
        c.post("/api/v1/similar", json={"text": "warm-up: load the model"}).raise_for_status()
        for n, docid in enumerate(sample, 1):
            paper = rows[docid]
            t0 = time.perf_counter()
            r = c.post("/api/v1/similar", json={"text": paper.abstract, "page_size": 10})
            latencies.append((time.perf_counter() - t0) * 1000)
            r.raise_for_status()
            ids = [h["paper"]["id"] for h in r.json()["hits"]]
            top1 += bool(ids) and ids[0] == paper.arxiv_id
            top10 += paper.arxiv_id in ids
            if n % 50 == 0:
                log(f"{n}/{len(sample)}: top-1 {top1 / n:.3f}, top-10 {top10 / n:.3f}")
    engine.close()
    info = machine_info()
    n = len(sample)
    body = "\n".join(
        [
            "## Papers like this text (issue 22)",
            "",
            f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {info['cpu']} ({info['cores']} cores), "
            f"revision {info['revision']}; load {load_start} at start, "
            f"{load_average()} at end (1/5/15 min). `.venv/bin/python bench/similar_text.py "
            f"--papers {n} --seed {args.seed}{' --partial' if args.partial else ''}`: {n} "
            f"papers drawn from the {len(embedded):,} embedded of the {len(rows):,} in the "
            "demo corpus (the corpus searched is the embedded ones); each one's abstract "
            "alone (its title left out) posted to "
            "`POST /api/v1/similar` on a real server, one at a time, nearest 10 asked for.",
            "",
            table(
                ["measure", "value"],
                [
                    ["paper itself first (top-1)", f"{top1 / n:.3f} ({top1}/{n})"],
                    ["paper itself in the first 10", f"{top10 / n:.3f} ({top10}/{n})"],
                    [
                        "latency p50 / p90 / p99 (ms)",
                        " / ".join(f"{percentile(latencies, q):.1f}" for q in (50, 90, 99)),
                    ],
                ],
            ),
            "",
            "The model reads the first 256 tokens of a text; an abstract is most of what a "
            "paper was embedded from, so this is an easy case (a check that the endpoint "
            "embeds and ranks as indexing did), not a retrieval-quality figure. Latency is per "
            "request on the client, JSON included, and covers embedding the whole text (256 "
            "tokens: an abstract fills them, a search query is a few) on the query session's "
            "one thread and an exact scan for the nearest up to the result window; the machine "
            "was shared with other work (the load above), so read it as an upper bound.",
        ]
    )
    publish("similar-text", body, args.write)


if __name__ == "__main__":
    main()
