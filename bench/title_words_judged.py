"""What putting first the papers whose title holds a two-word query does (engine.title_match).

    .venv/bin/python bench/title_words_judged.py [--config config.toml] [--write]

The title rule put first the papers whose title holds the query as a phrase (when at most
``[search] title_phrase_max`` titles do) only from three words; "Costly Collaborations" was
the 10th hybrid hit on the demo for its own paper's title. Since session 37 it applies from
two. This runs 16 two-word queries (written before any list was seen, but for "costly
collaborations", from a review) in hybrid relevance order on the demo directory, the rule
from three words and from two, and the one two-word query of ``bench/word_forms_judged.py``
it changes at 663k papers (keyword mode, as those were judged); then reads blind judgments
(``bench/judgments/demo-title-two-words.tsv``, ``663k-title-two-words.tsv`` and
``663k-word-forms.tsv``): relevant papers among the first ten and binary nDCG@10 (the ideal
from every paper judged relevant for the query); "?" is a paper not judged.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import ROOT, bench_config, publish, run_heading, table
from bench.rarest_judged import judged_by_query
from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.engine import title_match
from papersift.engine.results import Mode, SearchRequest
from papersift.engine.search import open_engine

JUDGED = ROOT / "bench" / "judgments"
QUERIES = (
    "citation recommendation", "author disambiguation", "peer review", "topic modeling",
    "query expansion", "plagiarism detection", "open access", "altmetrics twitter",
    "word embeddings", "machine translation", "scholarly recommendation",
    "costly collaborations", "research funding", "gender bias", "dependency parsing",
    "knowledge graphs",
)  # fmt: skip
AT_SCALE = ("superconducting transition",)
TOP = 10


Lists = dict[int, dict[str, list[str]]]  # words the rule starts from -> query -> ids


def top_ten(config: Config, queries: tuple[str, ...], mode: Mode) -> Lists:
    """The rule from three words and from two (``title_match.MIN_WORDS``): query -> ids."""
    uncached = dataclasses.replace(config, search=dataclasses.replace(config.search, cache_size=0))
    out: dict[int, dict[str, list[str]]] = {}
    with open_engine(uncached) as engine:
        for words in (3, 2):
            title_match.MIN_WORDS = words
            out[words] = {
                q: [h.paper.arxiv_id for h in engine.search(
                    SearchRequest(q, mode=mode, page_size=TOP)).hits]
                for q in queries
            }  # fmt: skip
    title_match.MIN_WORDS = 2
    return out


def ndcg(marks: list[int | None], relevant: int) -> float:
    dcg = sum((m or 0) / math.log2(k + 2) for k, m in enumerate(marks))
    ideal = sum(1 / math.log2(k + 2) for k in range(min(TOP, relevant)))
    return dcg / ideal if ideal else 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", type=Path, default=ROOT / "config.toml")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    judged = judged_by_query(JUDGED / "demo-title-two-words.tsv")
    for name in ("663k-word-forms.tsv", "663k-title-two-words.tsv"):
        for q, marks in judged_by_query(JUDGED / name).items():
            if q in AT_SCALE:
                judged.setdefault(q, {}).update(marks)
    runs = [(top_ten(load_config(args.config), QUERIES, "hybrid"), "demo, hybrid")]
    if scale_data.data_path(0).exists():
        runs.append((top_ten(bench_config(scale_data.data_path(0)), AT_SCALE, "keyword"),
                     "663k, keyword"))  # fmt: skip
    rows = []
    sums = {3: [0, 0.0], 2: [0, 0.0]}
    for lists, where in runs:
        for q in lists[3]:
            if lists[3][q] == lists[2][q]:
                continue  # the rule changes nothing: no title holds the phrase, or too many
            marks = judged.get(q, {})
            cells = []
            for words in (3, 2):
                got = [marks.get(i) for i in lists[words][q]]
                score = ndcg(got, sum(marks.values()))
                sums[words][0] += sum(m or 0 for m in got)
                sums[words][1] += score
                shown = "".join("?" if m is None else str(m) for m in got)
                cells.append(f"{shown} ({sum(m or 0 for m in got)}, {score:.3f})")
            rows.append([q, where, *cells])
    n = len(rows)
    rows.append(["all changed", str(n), *(f"{s[0]}, mean nDCG@10 {s[1] / max(1, n):.3f}"
                                          for s in sums.values())])  # fmt: skip
    heads = ["query", "where", "from three words: top ten (relevant, nDCG@10)", "from two words"]
    body = (
        f"{run_heading('title_words_judged.py')}; the queries the rule changes (of "
        f"{len(QUERIES)} on the demo, {len(AT_SCALE)} at 663k):\n\n" + table(heads, rows)
    )
    publish("title-two-words", body, args.write)


if __name__ == "__main__":
    main()
