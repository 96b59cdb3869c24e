"""Load while writing, the campaign of ``bench/reliability.py``: a ``papersift serve`` process
over a small real data directory answers two loopback clients searching back to back (JSON
API in every mode, and the HTML search page), first idle, then while other processes harvest
new papers from recorded OAI-PMH pages, import a batch of papers and embed the backlog, and
while ``papersift reindex`` replays changes, embeds a second batch and folds the vector
segments.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from papersift.engine.datadir import DataDir  # noqa: E402
from papersift.indexer.build import embed_backlog, import_files  # noqa: E402
from papersift.indexer.identity_refresh import refresh_people  # noqa: E402
from tests.corpus import demo_records, make_config, sample_records, write_jsonl  # noqa: E402
from tests.load_kit import LoadGenerator, LoadStats, serve, wait_findable  # noqa: E402
from tests.reliability_kit import (  # noqa: E402
    HARVEST,
    PAPERSIFT,
    harvest_cmd,
    oai_server,
    paper_set,
    run,
)

SCHEDULE = {"refresh_seconds": 1.0, "embed": "", "maintenance": ""}


def log(message: str) -> None:
    print(f"[reliability] {message}", file=sys.stderr, flush=True)


def _figures(stats: LoadStats, seconds: float) -> dict[str, Any]:
    return {
        "requests": stats.requests,
        "failed": len(stats.failures),
        "failures": stats.failures[:5],
        "p50": stats.percentile(50),
        "p99": stats.percentile(99),
        "seconds": seconds,
    }


def load_campaign(root: Path, idle_seconds: float, clients: int = 2) -> dict[str, Any]:
    """Idle load, then load during harvest + import + embedding; figures of both phases."""
    config = make_config(root, harvest=HARVEST, schedule=SCHEDULE)
    config_path = root / "config.toml"
    data = DataDir(config)
    try:
        import_files(data, [write_jsonl(root / "base.jsonl", sample_records(every=40))])
        refresh_people(data)
        embed_backlog(data)
    finally:
        data.close()
    have = set(paper_set(config_path))
    batch = [r for r in demo_records()[7::100] if r["id"] not in have]
    batch_file = write_jsonl(root / "batch.jsonl", batch)
    known = have | {r["id"] for r in batch}
    second = [r for r in demo_records()[11::50] if r["id"] not in known]
    second_file = write_jsonl(root / "second.jsonl", second)
    result: dict[str, Any] = {"base": len(have), "batch": len({r["id"] for r in batch}),
                              "second": len({r["id"] for r in second})}  # fmt: skip
    with oai_server() as oai_url, serve(config_path, root / "serve.log") as url:
        with LoadGenerator(url, clients) as idle:
            time.sleep(idle_seconds)
        result["idle"] = _figures(idle.stats, idle_seconds)
        log(f"load idle: {result['idle']}")
        start = time.monotonic()
        with LoadGenerator(url, clients) as busy:
            run(harvest_cmd(config_path, oai_url))
            harvested = time.monotonic()
            new = {i: v[1] for i, v in paper_set(config_path).items() if i not in have}
            result["harvested"] = len(new)
            missing = wait_findable(url, new, "keyword")
            result["keyword_findable_s"] = time.monotonic() - harvested
            run([*PAPERSIFT, "import", "--config", str(config_path), str(batch_file)])
            run([*PAPERSIFT, "index", "--config", str(config_path)])
            embedded = time.monotonic()
            missing += wait_findable(url, new, "semantic")
            result["semantic_findable_s"] = time.monotonic() - embedded
        result["busy"] = _figures(busy.stats, time.monotonic() - start)
        log(f"load while writing: {result['busy']}")
        # A batch left for later, then ``reindex`` (replay, embed the backlog, fold the
        # vector segments) under the same load.
        run([*PAPERSIFT, "import", "--config", str(config_path), str(second_file)])
        start = time.monotonic()
        with LoadGenerator(url, clients) as during:
            run([*PAPERSIFT, "reindex", "--config", str(config_path)], timeout=3600)
        result["reindex"] = _figures(during.stats, time.monotonic() - start)
        log(f"load during reindex: {result['reindex']}")
        result["not_findable"] = missing
    result["clients"] = clients
    result["ok"] = not missing and not any(g.stats.failures for g in (idle, busy, during))
    return result
