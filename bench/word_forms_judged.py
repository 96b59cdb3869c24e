"""What requiring a word's own forms, not its stem, does to keyword lists at 663k papers.

    .venv/bin/python bench/word_forms_judged.py [--size 0] [--write]
    .venv/bin/python bench/word_forms_judged.py --to-judge FILE   # the papers to judge

Titles and abstracts are searched stemmed (Porter2), so "transformer" matched "Fourier
transform" and "specification" matched "specific". Since session 36 a word a match must hold
is held in one of its forms (``engine.word_forms``; ``[search] match_word_forms``). This
runs each query in keyword mode on the scale directory (real arXiv text; its vectors are
recycled, so hybrid is not judged here) with the rule off and on: the total, the ten most
relevant and the newest ten. ``match_all_sorted_from`` is 0 in both, so the newest lists
show this rule alone (bench/near_words_judged.py adds the near-words rule to them).
``bench/judgments/663k-word-forms.tsv`` holds blind judgments of every paper of those lists;
a paper not judged shows as "?".
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import ROOT, bench_config, publish, run_heading, table
from bench.rarest_judged import judged_by_query, to_judge_rows
from papersift.engine.results import SearchRequest, Sort
from papersift.engine.search import SearchEngine, open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "663k-word-forms.tsv"
TOP = 10
# Written in session 36 (2026-12-07 17:05 UTC) after the rule was built and before any list
# of them was seen (the totals of "transformer", "specification", "quantum computing" and
# "generative models" had been).
QUERIES = (
    "transformer",
    "motivic cohomology",
    "bosonization",
    "quantum computing",
    "generative models",
    "convex optimization",
    "graph embeddings",
    "specification",
    "superconducting transition",
    "community detection",
    "knowledge distillation",
    "gravitational wave detection",
    "neural network compression",
    "causal inference",
    "topological insulators",
    "galaxy formation simulations",
)
ORDERS: tuple[Sort, ...] = ("relevance", "newest")

Lists = dict[tuple[bool, Sort], tuple[int, list[str]]]


def lists(engines: dict[bool, SearchEngine], query: str) -> Lists:
    """(rule on, order) -> (total, the first ten ids), keyword mode."""
    out: Lists = {}
    for on, engine in engines.items():
        for order in ORDERS:
            result = engine.search(SearchRequest(query, mode="keyword", sort=order, page_size=TOP))
            out[on, order] = (result.total, [h.paper.arxiv_id for h in result.hits])
    return out


def to_judge(engines: dict[bool, SearchEngine], path: Path) -> None:
    """Every paper of every list once per query, shuffled, without saying which list."""
    rows = []
    for q in QUERIES:
        ids = {i for _, found in lists(engines, q).values() for i in found}
        rows += [(q, i) for i in sorted(ids)]
    random.Random(36).shuffle(rows)
    to_judge_rows(engines[True], rows, path)


def report(engines: dict[bool, SearchEngine], judged: dict[str, dict[str, int]]) -> tuple[str, str]:
    rows: list[list[str]] = []
    found = {key: 0 for key in ((on, order) for order in ORDERS for on in (False, True))}
    shown = dict.fromkeys(found, 0)
    for q in QUERIES:
        got = lists(engines, q)
        cells = []
        for key in found:
            ids = got[key][1]
            marks = [judged.get(q, {}).get(i) for i in ids]
            unknown = sum(m is None for m in marks)
            relevant = sum(m or 0 for m in marks)
            found[key] += relevant
            shown[key] += len(ids)
            cells.append(f"{relevant} of {len(ids)}" + (f" ({unknown} ?)" if unknown else ""))
        rows.append([q, f"{got[False, 'relevance'][0]:,} -> {got[True, 'relevance'][0]:,}", *cells])
    head = [
        "query", "total, stem -> forms", "relevance: stem", "relevance: forms",
        "newest: stem", "newest: forms",
    ]  # fmt: skip
    summary = "; ".join(
        f"{order}: {found[False, order]} of {shown[False, order]} with the stem, "
        f"{found[True, order]} of {shown[True, order]} with the forms"
        for order in ORDERS
    )
    return table(head, rows), summary


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=0, help="scale directory (0: all 663k)")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    ap.add_argument("--to-judge", type=Path, help="write the papers to judge here and stop")
    args = ap.parse_args()
    scale_data.require(args.size)
    root = scale_data.data_path(args.size)
    with (
        open_engine(bench_config(root, match_word_forms=False, match_all_sorted_from=0)) as stems,
        open_engine(bench_config(root, match_word_forms=True, match_all_sorted_from=0)) as forms,
    ):
        engines = {False: stems, True: forms}
        if args.to_judge:
            to_judge(engines, args.to_judge)
            return
        body, summary = report(engines, judged_by_query(JUDGMENTS))
    text = (
        f"{run_heading('word_forms_judged.py')}: "
        f"{scale_data.label(args.size)} scale directory, keyword mode; judgments "
        f"{JUDGMENTS.name}. Relevant among the first ten of every query: {summary}.\n\n{body}"
    )
    publish(f"word-forms-{JUDGMENTS.stem}", text, args.write)


if __name__ == "__main__":
    main()
