"""Benchmark of sitemap generation at the 672k-paper benchmark corpus.

Reads (arxiv_id, title, updated) of every paper of the snapshot (not timed), then times
what ``/sitemaps/papers-<n>.xml`` does per chunk: slug each title and stream the
``<urlset>`` (``feeds.sitemap.urlset``), for every chunk; and the index. With ``--store`` it
also loads the rows into a real ``PaperStore`` (SQLite) in a temp folder and times the two
store reads the routes make (``sitemap_chunks``, ``iter_sitemap_rows`` for one chunk).

    .venv/bin/python bench/sitemap_bench.py [--snapshot PATH] [--limit N] [--store]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, log, machine_info, table, write_section
from papersift.core.paper import Paper
from papersift.core.urls import slugify
from papersift.engine.store import PaperStore
from papersift.feeds.sitemap import MAX_URLS, sitemap_index, urlset
from papersift.indexer.snapshot import SnapshotReader

SNAPSHOT = Path(__file__).resolve().parents[2] / "shared/data/arxiv/arxiv-snapshot-bench.jsonl.xz"
ROOT_URL = "https://papers.example.org"
Row = tuple[str, str, date]


def read_rows(path: Path, limit: int, store: PaperStore | None) -> list[Row]:
    """(arxiv_id, title, updated) of each paper; with a store, load the papers into it too."""
    rows: list[Row] = []
    batch: list[Paper] = []
    for paper in SnapshotReader(path):
        rows.append((paper.arxiv_id, paper.title, paper.updated))
        if store is not None:
            batch.append(paper)
            if len(batch) == 20_000:
                store.upsert(batch)
                batch = []
        if len(rows) % 100_000 == 0:
            log(f"read {len(rows):,} papers")
        if limit and len(rows) >= limit:
            break
    if store is not None and batch:
        store.upsert(batch)
    return rows


def entries(rows: list[Row]) -> Iterator[tuple[str, date | None]]:
    return ((f"/papers/{i}-{slugify(t)}", u) for i, t, u in rows)


def time_chunks(rows: list[Row]) -> tuple[float, list[float], int]:
    """Seconds for all chunks, seconds per chunk, total bytes."""
    per_chunk, size = [], 0
    start = time.perf_counter()
    for lo in range(0, len(rows), MAX_URLS):
        t = time.perf_counter()
        size += sum(len(piece) for piece in urlset(ROOT_URL, entries(rows[lo : lo + MAX_URLS])))
        per_chunk.append(time.perf_counter() - t)
    return time.perf_counter() - start, per_chunk, size


def time_store(store: PaperStore) -> list[list[str]]:
    out = []
    t = time.perf_counter()
    chunks = store.sitemap_chunks(MAX_URLS)
    elapsed = time.perf_counter() - t
    out.append(
        ["store: lastmod of every chunk (index)", f"{elapsed:.3f} s", f"{len(chunks)} chunks"]
    )
    t = time.perf_counter()
    n = sum(1 for _ in store.iter_sitemap_rows(1, MAX_URLS))
    out.append(["store: rows of one chunk", f"{time.perf_counter() - t:.3f} s", f"{n:,} rows"])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snapshot", type=Path, default=SNAPSHOT)
    ap.add_argument("--limit", type=int, default=0, help="papers to read (0: all)")
    ap.add_argument("--store", action="store_true", help="also time the SQLite reads")
    ap.add_argument("--no-write", action="store_true", help="do not update bench/RESULTS.md")
    args = ap.parse_args()
    tmp = tempfile.TemporaryDirectory()
    store = PaperStore(Path(tmp.name) / "papers.sqlite") if args.store else None
    rows = read_rows(args.snapshot, args.limit, store)
    log(f"{len(rows):,} rows; timing")
    total, per_chunk, size = time_chunks(rows)
    t = time.perf_counter()
    n_chunks = len(per_chunk)
    index = sitemap_index(ROOT_URL, ((f"/sitemaps/papers-{n}.xml", None)
                                     for n in range(1, n_chunks + 1)))  # fmt: skip
    index_s = time.perf_counter() - t
    # fmt: off
    result = [
        ["all paper chunks (slug + XML)", f"{total:.2f} s", f"{len(rows) / total:,.0f} URLs/s"],
        ["one chunk of 50,000 URLs (median)", f"{statistics.median(per_chunk):.3f} s",
         f"{size / n_chunks / 2**20:.1f} MB uncompressed"],
        ["sitemap index", f"{index_s * 1000:.2f} ms", f"{len(index):,} bytes"],
    ]
    # fmt: on
    if store is not None:
        result += time_store(store)
        store.close()
    tmp.cleanup()
    info = machine_info()
    text = "\n".join(
        [
            "## Sitemap generation",
            "",
            f"{len(rows):,} papers of `{args.snapshot.name}` in {n_chunks} chunks of at most "
            f"{MAX_URLS:,} URLs; {size / 2**20:.0f} MB of XML in all. Pure transform "
            "(`feeds/sitemap.py` plus slugs), one core"
            + ("; store rows from a real SQLite `PaperStore`." if args.store else "."),
            "",
            table(["what", "time", "size / rate"], result),
            "",
            f"Command: `.venv/bin/python bench/sitemap_bench.py{' --store' if args.store else ''}`"
            f". Machine: {info['cpu']}, {info['cores']} cores, Python {info['python']}, "
            f"load {load_average()}, revision {info['revision']}.",
        ]
    )
    print(text)
    if not args.no_write:
        write_section("sitemap", text)


if __name__ == "__main__":
    main()
