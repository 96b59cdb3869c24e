"""What a short query's rarest word ([search] match_rarest_up_to) does to date-sorted lists.

    .venv/bin/python bench/rarest_judged.py [--config config.toml] [--size 0] [--write]

A query of four free words needs three of them (``match_all_up_to`` 3, ``match_fraction``
0.5). Which three matters: "large language models hallucination" sorted by date, with any
three, lists the newest papers on large language models, "hallucination" or not. Since
session 30 the word a paper may leave out is never the query's rarest.

``bench/judgments/demo-rarest-heldout.tsv`` holds blind judgments of the newest ten papers
that hybrid search on the demo corpus (``make serve``'s data directory, all embedded) lists
for held-out queries of four words, with the rule off and on. This prints, per query, the
totals in each mode and the papers of the newest ten judged relevant, with the rule off (0)
and at the configured value; a paper not judged shows as "?" (the corpus or the rules changed
since). ``--judgments bench/judgments/demo-rarest-five-words.tsv --up-to 5`` compares 4 with
5 on three five-word queries (why the default stops at 4).
``--size N`` adds the totals of a fixed list of development queries (the ones the rule
was designed on) in keyword mode on a scale directory (``bench/scale_data.py``; 0: all).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
import time
from collections.abc import Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import ROOT, bench_config, load_average, machine_info, publish, table
from bench.semantic_judged import read_judgments
from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.engine.results import Mode, SearchRequest
from papersift.engine.search import SearchEngine, open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "demo-rarest-heldout.tsv"
NEWEST = 10
# Written before the rule existed; the rule's shape (which word, up to which length) was
# chosen looking at these, so they are not the held-out check.
DEVELOPMENT = (
    "large language models hallucination", "citation impact of open access",
    "graph neural networks for recommendation", "peer review quality assessment",
    "code generation with language models", "knowledge distillation for small models",
    "scientific claim verification evidence", "neural machine translation low resource",
    "dialogue state tracking zero shot",
)  # fmt: skip


def judged_by_query(path: Path) -> dict[str, dict[str, int]]:
    """query -> arxiv id -> 1 (relevant) or 0 (``semantic_judged.read_judgments``'s file
    format)."""
    judged: dict[str, dict[str, int]] = {}
    for query, arxiv_id, relevant in read_judgments(path):
        judged.setdefault(query, {})[arxiv_id] = relevant
    return judged


def to_judge_rows(engine: SearchEngine, rows: list[tuple[str, str]], path: Path) -> None:
    """(query, arXiv id) rows, with each paper's title and abstract's start, as judges read."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter="\t")
        out.writerow(["query", "arxiv_id", "title", "abstract"])
        for q, i in rows:
            paper = engine.paper(i)
            assert paper is not None
            text = " ".join(paper.abstract.split())[:400]
            out.writerow([q, i, " ".join(paper.title.split()), text])
    print(f"{len(rows)} papers to judge in {path}")


def with_rule(config: Config, up_to: float, setting: str = "match_rarest_up_to") -> Config:
    """``config`` with ``[search] setting`` at ``up_to`` and no result cache."""
    search = dataclasses.replace(config.search, **{setting: up_to}, cache_size=0)
    return dataclasses.replace(config, search=search)


def newest(config: Config, queries: Iterable[str], mode: Mode) -> dict[str, tuple[int, list[str]]]:
    """query -> (total, the newest ``NEWEST`` ids) in ``mode``, newest first."""
    out = {}
    with open_engine(config) as engine:
        for q in queries:
            result = engine.search(SearchRequest(q, mode=mode, sort="newest", page_size=NEWEST))
            out[q] = (result.total, [h.paper.arxiv_id for h in result.hits])
    return out


def judged_table(
    config: Config, judged: dict[str, dict[str, int]], on: float, off: float = 0,
    setting: str = "match_rarest_up_to",
) -> tuple[str, str]:  # fmt: skip
    """The per-query table, and how many of all the newest tens are relevant, with the
    rule (``[search] setting``) at ``off`` (0: off) and at ``on``."""
    runs = {
        (up_to, mode): newest(with_rule(config, up_to, setting), judged, mode)
        for up_to in (off, on) for mode in ("keyword", "hybrid")
    }  # fmt: skip

    def relevant(q: str, ids: list[str]) -> str:
        marks = [judged[q].get(i) for i in ids]
        unknown = sum(m is None for m in marks)
        found = sum(m or 0 for m in marks)
        return f"{found} of {len(ids)}" + (f" ({unknown} ?)" if unknown else "")

    rows = []
    for q in judged:
        off_ids, on_ids = runs[(off, "hybrid")][q][1], runs[(on, "hybrid")][q][1]
        rows.append([
            q, f"{runs[(off, 'keyword')][q][0]:,} -> {runs[(on, 'keyword')][q][0]:,}",
            f"{runs[(off, 'hybrid')][q][0]:,} -> {runs[(on, 'hybrid')][q][0]:,}",
            relevant(q, off_ids), relevant(q, on_ids),
        ])  # fmt: skip
    head = [
        "query", f"keyword total, {off} -> {on}", f"hybrid total, {off} -> {on}",
        f"relevant of the newest {NEWEST}, at {off}", f"at {on}",
    ]  # fmt: skip
    every = {
        up_to: [(q, i) for q in judged for i in runs[(up_to, "hybrid")][q][1]]
        for up_to in (off, on)
    }
    found = {up_to: sum(judged[q].get(i, 0) for q, i in pairs) for up_to, pairs in every.items()}
    summary = (
        f"{found[off]} of {len(every[off])} with the rule at {off}, {found[on]} of "
        f"{len(every[on])} at {on}"
    )
    return table(head, rows), summary


def development_table(size: int, on: int) -> str:
    config = bench_config(scale_data.data_path(size))
    off_run = newest(with_rule(config, 0), DEVELOPMENT, "keyword")
    on_run = newest(with_rule(config, on), DEVELOPMENT, "keyword")
    rows = [[q, f"{off_run[q][0]:,}", f"{on_run[q][0]:,}"] for q in DEVELOPMENT]
    return table(["development query", "keyword total, off", f"on ({on})"], rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", default="config.toml", help="the demo data directory's config")
    ap.add_argument("--judgments", type=Path, default=JUDGMENTS)
    ap.add_argument(
        "--up-to",
        type=int,
        default=None,
        help="the rule's value to compare "
        "(default: the configured one) with the one below it, or with 0 at 4",
    )
    ap.add_argument("--size", type=int, default=None, help="also a scale directory (0: all)")
    ap.add_argument("--write", action="store_true", help="write the tables into RESULTS.md")
    args = ap.parse_args()
    config = load_config(args.config)
    judged = judged_by_query(args.judgments)
    on = config.search.match_rarest_up_to if args.up_to is None else args.up_to
    body, summary = judged_table(config, judged, on, 0 if on <= 4 else on - 1)
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    info = machine_info()
    text = (
        f"`{' '.join(['.venv/bin/python bench/rarest_judged.py', *sys.argv[1:]])}` "
        f"({stamp}, revision {info['revision']}, "
        f"load {load_average()}): the demo corpus, hybrid and keyword mode, newest first; "
        f"judgments {args.judgments.name}. Relevant among the newest {NEWEST} of every "
        f"query (hybrid): {summary}.\n\n{body}"
    )
    if args.size is not None:
        text += (
            f"\n\nDevelopment queries at scale directory size {args.size} "
            f"(0: all), keyword mode:\n\n" + development_table(args.size, on)
        )
    publish(f"rarest-{args.judgments.stem}", text, args.write)


if __name__ == "__main__":
    main()
