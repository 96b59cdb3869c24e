"""What holding a hyphenated word's parts together does to date-sorted lists.

    .venv/bin/python bench/hyphen_judged.py [--config config.toml] [--write]
    .venv/bin/python bench/hyphen_judged.py --to-judge FILE   # the papers to judge, shuffled

A hyphenated word is searched as its parts, each optional (``engine.query.Clause.parts``).
Sorted by date, "h-index" listed the newest papers holding "index" or a lone "h". Since
session 32 a date-sorted list's matches must hold a hyphenated word's parts together
(``engine.rarer_words``). Relevance order is unchanged.

``bench/judgments/demo-hyphen-heldout.tsv`` holds blind judgments of, per held-out query on
the demo corpus (``make serve``'s data directory, all embedded), the newest ten keyword
matches under relevance order's rule (the lists before), the newest ten under the date
order's rule (keyword and hybrid mode). This prints the totals and the relevant papers
among each newest ten; a paper not judged shows as "?" (the corpus or the rules changed).
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, publish, run_heading, table
from bench.rarest_judged import judged_by_query, to_judge_rows
from papersift.core.config_load import load_config
from papersift.engine.plan import make_plan
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine, open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "demo-hyphen-heldout.tsv"
NEWEST = 10
# Written in session 32 (2026-12-07 04:59 UTC) after the rule was built and before any of
# them was run sorted by date.
QUERIES = (
    "h-index",
    "peer-review",
    "self-supervised speech representations",
    "co-authorship networks",
    "open-access publishing",
    "fine-tuning",
    "zero-shot classification",
    "out-of-distribution detection",
    "multi-agent debate",
    "retrieval-augmented generation",
    "low-resource machine translation",
    "citation-based metrics",
)


def lists(engine: SearchEngine, query: str) -> dict[str, tuple[int, list[str]]]:
    """The newest ten and the total of: keyword matches under relevance order's rule
    ("before"), under the date order's ("keyword"), and hybrid's date order ("hybrid")."""
    out = {}
    for mode in ("keyword", "hybrid"):
        request = SearchRequest(query, mode=mode, sort="newest", page_size=NEWEST)
        result = engine.search(request)
        out[mode] = (result.total, [h.paper.arxiv_id for h in result.hits])
    plan = make_plan(engine, SearchRequest(query, mode="keyword", sort="newest"), NEWEST)
    lex, store = engine.data.lexical, engine.data.store
    loose = plan.rarer.loose if plan.rarer is not None else plan.keyword.query
    assert loose is not None
    query_all = lex.combine(loose, plan.filt)
    docids, _ = lex.top(query_all, NEWEST, 0, "newest")
    papers = store.get(list(docids))
    out["before"] = (lex.count(query_all), [papers[d].arxiv_id for d in docids])
    return out


def to_judge(engine: SearchEngine, path: Path) -> None:
    """Every paper of every list once per query, shuffled, without saying which list."""
    rows = []
    for q in QUERIES:
        ids = {i for _, found in lists(engine, q).values() for i in found}
        rows += [(q, i) for i in sorted(ids)]
    random.Random(32).shuffle(rows)
    to_judge_rows(engine, rows, path)


def report(engine: SearchEngine, judged: dict[str, dict[str, int]]) -> tuple[str, str]:
    rows: list[list[str]] = []
    found = {"before": 0, "keyword": 0, "hybrid": 0}
    shown = dict.fromkeys(found, 0)
    for q in QUERIES:
        cells = []
        for name, (total, ids) in lists(engine, q).items():
            marks = [judged.get(q, {}).get(i) for i in ids]
            unknown = sum(m is None for m in marks)
            relevant = sum(m or 0 for m in marks)
            found[name] += relevant
            shown[name] += len(ids)
            cells.append((name, f"{total:,} / {relevant} of {len(ids)}" + (
                f" ({unknown} ?)" if unknown else ""
            )))  # fmt: skip
        by = dict(cells)
        rows.append([q, by["before"], by["keyword"], by["hybrid"]])
    head = [
        "query", "before (keyword): total / relevant of newest 10",
        "keyword now", "hybrid now",
    ]  # fmt: skip
    summary = ", ".join(f"{name} {found[name]} of {shown[name]}" for name in found)
    return table(head, rows), summary


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", default="config.toml", help="the demo data directory's config")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    ap.add_argument("--to-judge", type=Path, help="write the papers to judge here and stop")
    args = ap.parse_args()
    with open_engine(load_config(args.config)) as engine:
        if args.to_judge:
            to_judge(engine, args.to_judge)
            return
        body, summary = report(engine, judged_by_query(JUDGMENTS))
    text = (
        f"{run_heading('hyphen_judged.py')}: the demo corpus, newest first; "
        f"judgments {JUDGMENTS.name}. Relevant among the newest ten of every query: "
        f"{summary}.\n\n{body}"
    )
    publish(f"hyphen-{JUDGMENTS.stem}", text, args.write)


if __name__ == "__main__":
    main()
