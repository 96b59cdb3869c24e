"""How many author-list pieces that are places or organisations become "researchers":
the author parser of a base commit (default ``main``) against this checkout's, on the demo
corpus and the first records of the benchmark snapshot.

    .venv/bin/python bench/author_affiliations.py [--base main] [--bench-records 100000]

"Affiliation-like" is a broader test than the parser's own rule (any organisation or
address word, any country, any digit, more than five words), so that what the rule misses
shows up too; its hits still include real names ("Jason Street"), so the names are listed
for a reader to judge. Prints a markdown section for bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import lzma
import re
import subprocess
import sys
import types
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from papersift.core.authors import parse_authors  # noqa: E402
from papersift.core.resources import demo_corpus_path  # noqa: E402

BENCH_SNAPSHOT = ROOT.parent.parent / "shared" / "data" / "arxiv" / "arxiv-snapshot-bench.jsonl.xz"
BROAD = re.compile(
    r"\b(?:universit\w*|univ|institut\w*|department|dept|laborator\w*|labs?|corporation|corp|"
    r"inc|ltd|gmbh|college|school|faculty|cent(?:er|re)|hospital|academy|foundation|research|"
    r"company|division|ministry|national|sciences?|technology|polytechnic|observatory|street|"
    r"road|avenue|japan|china|usa|germany|france|italy|spain|india|korea|canada|australia|"
    r"brazil|russia|netherlands|switzerland|sweden|israel|uk)\b",
    re.IGNORECASE,
)
Parser = Callable[[str, Any], tuple[Any, ...]]


def affiliation_like(name: str) -> bool:
    return bool(BROAD.search(name) or re.search(r"\d", name) or len(name.split()) > 5)


def base_parser(commit: str) -> Parser:
    """``parse_authors`` as ``indexer/authors.py`` was at ``commit``."""
    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{commit}:indexer/authors.py"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    module = types.ModuleType("authors_base")
    exec(compile(source, f"{commit}:indexer/authors.py", "exec"), module.__dict__)
    parse: Parser = module.parse_authors
    return parse


def records(path: Path, limit: int) -> Iterator[dict[str, Any]]:
    opener = lzma.open if path.suffix == ".xz" else gzip.open
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in itertools.islice(fh, limit):
            yield json.loads(line)


def measure(path: Path, limit: int, parsers: dict[str, Parser]) -> dict[str, Any]:
    names = {k: Counter[str]() for k in parsers}
    n = 0
    for r in records(path, limit):
        n += 1
        for k, parse in parsers.items():
            names[k].update(a.name for a in parse(r.get("authors", ""), r.get("authors_parsed")))
    out: dict[str, Any] = {"records": n}
    for k, c in names.items():
        flagged = {name for name in c if affiliation_like(name)}
        out[k] = {"authors": sum(c.values()), "distinct": len(c), "flagged": flagged}
    out["dropped"] = sorted(set(names["before"]) - set(names["after"]))
    out["added"] = sorted(set(names["after"]) - set(names["before"]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="main")
    ap.add_argument("--bench-records", type=int, default=100_000)
    args = ap.parse_args()
    parsers = {"before": base_parser(args.base), "after": parse_authors}
    corpora = [("demo corpus", demo_corpus_path(), 10**9)]
    if BENCH_SNAPSHOT.exists():
        corpora.append((f"bench snapshot, first {args.bench_records:,}", BENCH_SNAPSHOT,
                        args.bench_records))  # fmt: skip
    print("| corpus | records | distinct names before | after | affiliation-like before | after "
          "| names gone | names new |")  # fmt: skip
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    details = []
    for label, path, limit in corpora:
        m = measure(path, limit, parsers)
        b, a = m["before"], m["after"]
        print(f"| {label} | {m['records']:,} | {b['distinct']:,} | {a['distinct']:,} | "
              f"{len(b['flagged'])} | {len(a['flagged'])} | {len(m['dropped'])} | "
              f"{len(m['added'])} |")  # fmt: skip
        details.append((label, m))
    for label, m in details:
        print(f"\n{label}: names no longer researchers: "
              + "; ".join(repr(x) for x in m["dropped"]))  # fmt: skip
        print(f"{label}: names that appear (an affiliation mark cut off): "
              + "; ".join(repr(x) for x in m["added"]))  # fmt: skip
        kept = sorted(m["after"]["flagged"])
        print(
            f"{label}: still affiliation-like (read them: mostly real names): "
            + "; ".join(repr(x) for x in kept[:80])
            + (" …" if len(kept) > 80 else "")
        )


if __name__ == "__main__":
    main()
