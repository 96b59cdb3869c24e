"""Does a numeric category field make Tantivy's category count cheaper? (issue 23)

    .venv/bin/python bench/facet_field_ab.py [--copies 3] [--rounds 15]

Keyword search counts the categories of every match with a terms aggregation over the
``cat`` text fast field (multi-valued: a paper has one or more). This builds a throw-away
index in a temp dir from the cached 100k directory's papers (``--copies`` times over), with
the categories both as that text field and as a multi-valued u64 field of category codes,
and the year as in the product, then times the three aggregations alone for a few words
(median of ``--rounds``), one after another on the same matches.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import tantivy

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data

WORDS = ("learning", "quantum", "model", "the")
AGGS = {
    "categories, text field": {"c": {"terms": {"field": "cat", "size": 30}}},
    "categories, u64 codes": {"c": {"terms": {"field": "catn", "size": 30}}},
    "years (one value each)": {"y": {"terms": {"field": "year", "size": 200}}},
}


def build(copies: int, folder: str) -> tantivy.Index:
    path = scale_data.data_path(100_000) / "papers.sqlite"
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT title, abstract, categories, published FROM papers").fetchall()
    code = {c: i for i, c in enumerate(sorted({c for r in rows for c in r[2].split()}))}
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("body", stored=False)
    sb.add_text_field("cat", stored=False, tokenizer_name="raw", fast=True)
    sb.add_integer_field("catn", stored=False, indexed=False, fast=True)
    sb.add_integer_field("year", stored=False, indexed=True, fast=True)
    index = tantivy.Index(sb.build(), path=folder)
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for title, abstract, categories, published in rows * copies:
        doc = tantivy.Document()
        doc.add_text("body", f"{title} {abstract}")
        for c in categories.split():
            doc.add_text("cat", c)
            doc.add_integer("catn", code[c])
        doc.add_integer("year", int(published[:4]))
        writer.add_document(doc)
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        index = build(args.copies, folder)
        searcher = index.searcher()
        print(f"{searcher.num_docs:,} documents\n")
        print("| word | matches | " + " | ".join(f"{k} ms" for k in AGGS) + " |")
        print("| --- | ---: |" + " ---: |" * len(AGGS))
        for word in WORDS:
            query = index.parse_query(word, ["body"])
            matches = searcher.search(query, 1, count=True).count  # type: ignore[attr-defined]
            cells = []
            for agg in AGGS.values():
                times = []
                for _ in range(args.rounds):
                    t0 = time.perf_counter()
                    searcher.aggregate(query, agg)
                    times.append((time.perf_counter() - t0) * 1000)
                cells.append(f"{statistics.median(times):.2f}")
            print(f"| {word} | {matches:,} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
