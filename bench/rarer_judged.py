"""What the rarer-words rule of date-sorted lists ([search] match_common_above_sorted) does.

    .venv/bin/python bench/rarer_judged.py [--config config.toml] [--write]

A query of five or more free words needs three of them, any three. Sorted by date, the
newest papers holding "question answering" and "over" came first for "question answering
over knowledge bases". Since session 31 a date-sorted list's matches must hold the query's
rarer words first; words more than the setting's share of papers hold count only after
them (``engine.rarer_words``).

``bench/judgments/demo-rarer-heldout.tsv`` holds blind judgments of the newest ten papers
that hybrid search on the demo corpus (``make serve``'s data directory, all embedded) lists
for twelve held-out queries, with the rule off, at 0.2 (the default) and at 0.3, and of the
newest six keyword matches the rule at 0.2 leaves out. This prints, per query, the totals
and the relevant papers among the newest ten at each value, and among those left out; a
paper not judged shows as "?" (the corpus or the rules changed since).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, publish, run_heading, table
from bench.rarest_judged import judged_by_query, newest, with_rule
from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine

JUDGMENTS = ROOT / "bench" / "judgments" / "demo-rarer-heldout.tsv"
SETTING = "match_common_above_sorted"
VALUES = (0.0, 0.2, 0.3)
LEFT_OUT = 6  # the newest keyword matches left out, judged per query


def keyword_ids(config: Config, query: str) -> list[str]:
    """Every keyword match of ``query``, newest first (up to the result window)."""
    ids: list[str] = []
    with open_engine(config) as engine:
        for page in range(1, config.search.max_window // 100 + 1):
            request = SearchRequest(query, mode="keyword", sort="newest", page=page, page_size=100)
            result = engine.search(request)
            ids += [h.paper.arxiv_id for h in result.hits]
            if page >= result.pages:
                break
    return ids


def report(config: Config, judged: dict[str, dict[str, int]], on: float) -> tuple[str, str]:
    runs = {v: newest(with_rule(config, v, SETTING), judged, "hybrid") for v in VALUES}
    off, strict = with_rule(config, 0.0, SETTING), with_rule(config, on, SETTING)

    def relevant(q: str, ids: list[str]) -> tuple[int, str]:
        marks = [judged[q].get(i) for i in ids]
        unknown = sum(m is None for m in marks)
        found = sum(m or 0 for m in marks)
        return found, f"{found} of {len(ids)}" + (f" ({unknown} ?)" if unknown else "")

    rows, found, left = [], dict.fromkeys(VALUES, 0), [0, 0]
    for q in judged:
        kept = set(keyword_ids(strict, q))
        dropped = [i for i in keyword_ids(off, q) if i not in kept][:LEFT_OUT]
        n, text = relevant(q, dropped)
        left[0], left[1] = left[0] + n, left[1] + len(dropped)
        cells = []
        for v in VALUES:
            k, shown = relevant(q, runs[v][q][1])
            found[v] += k
            cells.append(f"{runs[v][q][0]:,} / {shown}")
        rows.append([q, *cells, text])
    head = [
        "query", *(f"{v}: total / relevant of newest {10}" for v in VALUES),
        f"relevant of the newest {LEFT_OUT} left out at {on}",
    ]  # fmt: skip
    every = {v: sum(len(runs[v][q][1]) for q in judged) for v in VALUES}
    summary = ", ".join(f"{found[v]} of {every[v]} at {v}" for v in VALUES)
    summary += f"; of the papers left out at {on}, {left[0]} of {left[1]} relevant"
    return table(head, rows), summary


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--config", default="config.toml", help="the demo data directory's config")
    ap.add_argument("--write", action="store_true", help="write the table into RESULTS.md")
    args = ap.parse_args()
    config = load_config(args.config)
    on = getattr(config.search, SETTING)
    body, summary = report(config, judged_by_query(JUDGMENTS), on)
    text = (
        f"{run_heading('rarer_judged.py')}: the demo corpus, hybrid mode, "
        f"newest first; judgments {JUDGMENTS.name}. Relevant among the newest ten of every "
        f"query: {summary}.\n\n{body}"
    )
    publish(f"rarer-{JUDGMENTS.stem}", text, args.write)


if __name__ == "__main__":
    main()
