"""What needing a two-word query's words near each other does to date-sorted lists at 663k.

    .venv/bin/python bench/near_words_judged.py [--size 0] [--write]
    .venv/bin/python bench/near_words_judged.py --to-judge FILE   # the papers to judge

Sorted by date, a two-word query matched papers holding the words anywhere: "community
detection" listed scam detection and code-mixed benchmarks. Since session 36 such a list
needs the words at most two apart while ``[search] match_all_sorted_from`` papers hold them
so (``engine.near_words``). This runs the two-word queries of bench/word_forms_judged.py in
keyword mode, newest first, on the scale directory with that setting at 0 (the rule off)
and at its default, and reads blind judgments from ``bench/judgments/663k-word-forms.tsv``
and ``663k-near-words.tsv`` (the papers only the rule's lists drew); "?" is a paper not
judged.
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
from bench.word_forms_judged import JUDGMENTS as FORMS_JUDGMENTS
from bench.word_forms_judged import QUERIES as ALL_QUERIES
from bench.word_forms_judged import TOP
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "663k-near-words.tsv"
QUERIES = tuple(q for q in ALL_QUERIES if len(q.split()) == 2)


def newest(engine: SearchEngine, query: str) -> tuple[int, list[str]]:
    result = engine.search(SearchRequest(query, mode="keyword", sort="newest", page_size=TOP))
    return result.total, [h.paper.arxiv_id for h in result.hits]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=0, help="scale directory (0: all 663k)")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    ap.add_argument("--to-judge", type=Path, help="write the papers not yet judged here and stop")
    args = ap.parse_args()
    scale_data.require(args.size)
    root = scale_data.data_path(args.size)
    judged = judged_by_query(FORMS_JUDGMENTS)
    if JUDGMENTS.exists():
        for q, marks in judged_by_query(JUDGMENTS).items():
            judged.setdefault(q, {}).update(marks)
    with (
        open_engine(bench_config(root, match_all_sorted_from=0)) as off,
        open_engine(bench_config(root)) as on,
    ):
        got = {q: (newest(off, q), newest(on, q)) for q in QUERIES}
        if args.to_judge:
            rows = [(q, i) for q, (_, (_, ids)) in got.items() for i in ids
                    if i not in judged.get(q, {})]  # fmt: skip
            random.Random(36).shuffle(rows)
            to_judge_rows(on, rows, args.to_judge)
            return
    rows: list[list[str]] = []
    found, shown = [0, 0], [0, 0]
    for q, lists in got.items():
        cells = []
        for k, (_, ids) in enumerate(lists):
            marks = [judged.get(q, {}).get(i) for i in ids]
            unknown = sum(m is None for m in marks)
            found[k] += sum(m or 0 for m in marks)
            shown[k] += len(ids)
            cells.append(f"{sum(m or 0 for m in marks)} of {len(ids)}"
                         + (f" ({unknown} ?)" if unknown else ""))  # fmt: skip
        rows.append([q, f"{lists[0][0]:,} -> {lists[1][0]:,}", *cells])
    head = ["query", "total newest first, off -> on", "newest ten: off", "on"]
    text = (
        f"{run_heading('near_words_judged.py')}: "
        f"{scale_data.label(args.size)} scale directory, keyword mode, newest first; judgments "
        f"{FORMS_JUDGMENTS.name} and {JUDGMENTS.name}. Relevant among the newest ten of every "
        f"query: {found[0]} of {shown[0]} with the rule off, {found[1]} of {shown[1]} on."
        f"\n\n{table(head, rows)}"
    )
    publish(f"near-words-{JUDGMENTS.stem}", text, args.write)


if __name__ == "__main__":
    main()
