"""Researcher identities against a gold standard made from spelled-out names.

There is no hand-labelled gold set of arXiv authors, so this makes one: authorships whose
given names are spelled out ("Haifeng Wang") are the gold people (one spelled-out name,
one person: identity rule 2 assumes as much), and a share of them (``--initials``) is
rewritten to initials ("H. Wang") before clustering, as 1990s papers and many journals
write them. Clustering must then rejoin a person's initials from co-author evidence alone
without joining "Y. Wang" (Yi) to "Y. Wang" (Yu). Scored on the spelled-out authorships
only: B-cubed precision and recall, and the pairs of authorships joined though their gold
names are incompatible (false joins; see ``score``). The real pipeline: ``PaperStore.upsert`` then
``refresh_people``, on the demo corpus (2025-26 cs.IR/cs.DC/cs.CL with many Chinese names,
an author group of Wangs, 1990s cmp-lg) or the first ``--records`` of ``--source``.

    .venv/bin/python bench/identity_precision.py [--initials 1.0 0.5] [--source FILE.jsonl.xz]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import lzma
import random
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_config, log, table
from papersift.core.authors import normalise_name
from papersift.core.names import compatible, split_name
from papersift.core.paper import Author, Paper
from papersift.core.resources import demo_corpus_path
from papersift.engine.datadir import DataDir
from papersift.indexer.identity_refresh import refresh_people
from papersift.indexer.snapshot import record_to_paper


def records(source: Path, limit: int | None) -> list[dict[str, Any]]:
    opener = lzma.open if source.suffix == ".xz" else gzip.open
    with opener(source, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in itertools.islice(fh, limit)]


def initials(a: Author) -> Author:
    """ "Haifeng Wang" -> "H. Wang" (the suffix kept)."""
    p = split_name(a.key)
    name = " ".join([*(g[0].upper() + "." for g in p.given), p.surname.title()])
    name += f" {p.suffix.title()}." if p.suffix else ""
    return Author(name, normalise_name(name))


def degrade(
    papers: list[Paper], share: float, seed: int
) -> tuple[list[Paper], dict[tuple[str, int], str]]:
    """The papers with ``share`` of the spelled-out names as initials, and the gold name
    of each spelled-out authorship: (arxiv id, position) -> its original key."""
    rng = random.Random(seed)
    gold: dict[tuple[str, int], str] = {}
    out = []
    for p in papers:
        authors = []
        for pos, a in enumerate(p.authors):
            parts = split_name(a.key)
            if parts.full and not parts.collective:
                gold[(p.arxiv_id, pos)] = a.key
                if rng.random() < share:
                    a = initials(a)
            authors.append(a)
        out.append(replace(p, authors=tuple(authors)))
    return out, gold


def score(found: dict[tuple[str, int], int], gold: dict[tuple[str, int], str]) -> list[str]:
    """B-cubed precision / recall / F1 over the gold authorships, researchers and gold
    names among them, and pairs of authorships joined: of incompatible gold names (two
    people: "yi wang" and "yu wang"; false joins), of the same gold name (true joins).
    Precision counts an authorship joined to a compatible variant ("holger mueller",
    "holger muller"; "th stohlker", "thomas stohlker") as right, recall as missing: one
    spelled-out name per person is only a lower bound of the truth."""
    cluster: dict[int, list[str]] = defaultdict(list)
    for k, name in gold.items():
        cluster[found[k]].append(name)
    people = Counter(gold.values())
    precision = recall = 0.0
    false_pairs = true_pairs = 0
    for names in cluster.values():
        counts = Counter(names)
        for name, n in counts.items():
            near = sum(m for o, m in counts.items() if _compatible(name, o))
            precision += n * near / len(names)
            recall += n * n / people[name]
            true_pairs += n * (n - 1) // 2
            false_pairs += n * (len(names) - near)  # each such pair is seen from both ends
    p, r = precision / len(gold), recall / len(gold)
    return [
        f"{p:.4f}", f"{r:.4f}", f"{2 * p * r / (p + r):.4f}", f"{len(cluster):,}",
        f"{len(people):,}", f"{false_pairs // 2:,}", f"{true_pairs:,}",
    ]  # fmt: skip


def _compatible(a: str, b: str) -> bool:
    return a == b or compatible(split_name(a), split_name(b))


def run(papers: list[Paper], share: float, seed: int) -> list[str]:
    edited, gold = degrade(papers, share, seed)
    with tempfile.TemporaryDirectory() as tmp:
        data = DataDir(bench_config(Path(tmp) / "data"))
        try:
            data.store.upsert(edited)
            refresh_people(data)
            db = sqlite3.connect(Path(tmp) / "data" / "papers.sqlite")
            ids = dict(db.execute("SELECT docid, arxiv_id FROM papers"))
            found = {
                (ids[d], int(pos)): int(rid)
                for d, pos, rid in db.execute("SELECT docid, position, rid FROM authorships")
            }
            db.close()
        finally:
            data.close()
    return score(found, gold)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--source", type=Path, default=demo_corpus_path())
    ap.add_argument("--records", type=int, default=None, help="the first N records only")
    ap.add_argument("--initials", type=float, nargs="+", default=[1.0, 0.5])
    ap.add_argument("--seed", type=int, default=34)
    args = ap.parse_args()
    papers = [record_to_paper(r) for r in records(args.source, args.records)]
    log(f"{len(papers):,} papers from {args.source.name}")
    rows = []
    for share in args.initials:
        rows.append([f"{share:.0%}", *run(papers, share, args.seed)])
        log(f"initials {share}: {rows[-1]}")
    headers = ["spelled-out names as initials", "B3 precision", "B3 recall", "B3 F1",
               "researchers", "gold names", "false joins (pairs)",
               "true joins (pairs)"]  # fmt: skip
    print(table(headers, rows))


if __name__ == "__main__":
    main()
