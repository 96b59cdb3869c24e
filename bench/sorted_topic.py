"""Whether a date-sorted list keeps a multi-word query's topic at 663k papers of every field.

    .venv/bin/python bench/sorted_topic.py [--size 0] [--write]

Sorted by date, a query of four or more free words needed some of them (three, and a
four-word query its rarest), so at 663k papers "dark matter direct detection experiments"
listed the newest papers on object detection: no word is common enough there for the
rarer-words rule (``match_common_above_sorted``) to drop. Since session 35 such a list needs
every word while at least ``[search] match_all_sorted_from`` papers hold them all
(``engine.rarer_words``). This runs the queries below in keyword mode, newest first, with
the setting at 0 (the rule before) and as configured, and prints per query the total and,
of the newest ``NEWEST``, how many hold every free word (by the keyword index's analysers)
and how many are on the query's topic (a pattern written with the query), beside relevance
order's first ``NEWEST``. Keyword mode only: the scale directory's vectors are synthetic.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import bench_config, publish, run_heading, scale_parser, table
from papersift.core.paper import Paper
from papersift.engine.lexical_schema import STOP_WORDS, name_analyzer, text_analyzer
from papersift.engine.results import SearchRequest, Sort
from papersift.engine.search import SearchEngine, open_engine

SETTING = "match_all_sorted_from"
NEWEST = 24  # a page
# The review's four queries, then twenty written (with their topic patterns) on 2026-12-07
# at 13:41 UTC, before any was run at 663k papers.
QUERIES = (
    ("dark matter direct detection experiments", "dark matter"),
    ("quantum error correction code", "quantum"),
    ("protein structure prediction deep learning", "protein"),
    ("graph neural network molecular property prediction", "molec"),
    ("gravitational wave detection binary black holes", "gravitational wave"),
    ("cosmic microwave background polarization anisotropies", "microwave background|cmb"),
    ("neutrino oscillation mass hierarchy measurement", "neutrino"),
    ("topological insulator surface state transport", "topolog"),
    ("high temperature superconductivity cuprates pseudogap", "supercond|cuprate"),
    ("many body localization disordered spin chains", "localiz"),
    ("random matrix theory eigenvalue statistics", "random matri"),
    ("elliptic curves rank modular forms", "elliptic curve"),
    ("stochastic differential equations numerical schemes convergence", "stochastic differential"),
    ("optimal transport wasserstein distance computation", "transport|wasserstein"),
    ("reinforcement learning robot manipulation policy", "reinforcement"),
    ("adversarial examples robustness image classifiers", "adversarial"),
    ("speech recognition end to end models", "speech"),
    ("portfolio optimization risk measures", "portfolio"),
    ("causal inference observational studies treatment effects", "causal"),
    ("gene regulatory network inference single cell", "gene"),
    ("epidemic model vaccination network spreading", "epidem|vaccin"),
    ("exoplanet atmospheres transmission spectroscopy", "exoplanet|planet"),
    ("galaxy cluster weak lensing mass", "lensing"),
    ("lattice QCD hadron spectrum", "lattice"),
)  # fmt: skip
_TEXT, _NAMES = text_analyzer(), name_analyzer()


def holds_every_word(query: str, paper: Paper) -> bool:
    """Whether the paper's title, abstract or authors hold each of the query's free words
    (as the keyword index analyses them)."""
    text = f"{paper.title} {paper.abstract}"
    tokens = set(_TEXT.analyze(text)) | set(_NAMES.analyze(" ".join(a.name for a in paper.authors)))
    words = [w for w in query.split() if w.lower() not in STOP_WORDS]
    return all(set(_TEXT.analyze(w)) <= tokens for w in words)


def newest(engine: SearchEngine, sort: Sort) -> dict[str, tuple[int, list[Paper], float]]:
    """query -> (total, the first ``NEWEST`` papers, ms of CPU for the search)."""
    out = {}
    for query, _ in QUERIES:
        request = SearchRequest(query, mode="keyword", sort=sort, page_size=NEWEST)
        engine.search(request)  # warm
        t = time.thread_time()
        result = engine.search(request)
        ms = (time.thread_time() - t) * 1000
        out[query] = (result.total, [h.paper for h in result.hits], ms)
    return out


def report(size: int) -> tuple[str, str]:
    path = scale_data.data_path(size)
    runs = {}
    on = getattr(bench_config(path).search, SETTING)
    for value in (0, None):
        config = bench_config(path) if value is None else bench_config(path, **{SETTING: value})
        with open_engine(config) as engine:
            runs[value] = newest(engine, "newest")
            if value == 0:
                runs["relevance"] = newest(engine, "relevance")
    rows, sums = [], {k: [0, 0] for k in runs}
    for query, pattern in QUERIES:
        topic = re.compile(pattern)
        cells = []
        for key in (0, None, "relevance"):
            total, papers, _ = runs[key][query]
            every = sum(holds_every_word(query, p) for p in papers)
            on_topic = sum(bool(topic.search(f"{p.title} {p.abstract}".lower())) for p in papers)
            sums[key][0] += every
            sums[key][1] += on_topic
            cells.append(f"{total:,} / {every} / {on_topic}")
        rows.append([query, *cells])
    ms = {k: sorted(v[2] for v in runs[k].values()) for k in (0, None)}
    head = [
        "query", f"newest, before ({SETTING} 0): total / every word / on topic",
        f"newest, now ({on})", "relevance order",
    ]  # fmt: skip
    shown = NEWEST * len(QUERIES)
    summary = (
        f"of the newest {NEWEST} of {len(QUERIES)} queries, holding every word / on topic: "
        f"before {sums[0][0]} / {sums[0][1]} of {shown}, now {sums[None][0]} / {sums[None][1]}; "
        f"relevance order's first {NEWEST}: {sums['relevance'][0]} / {sums['relevance'][1]}. "
        f"Thread CPU per search sorted newest first, median: {ms[0][len(ms[0]) // 2]:.1f} ms "
        f"before, {ms[None][len(ms[None]) // 2]:.1f} ms now"
    )
    return table(head, rows), summary


def main() -> None:
    ap = scale_parser(__doc__, queries=None, rounds=1)
    args = ap.parse_args()
    body, summary = report(args.size)
    text = (
        f"{run_heading('sorted_topic.py')}: scale directory size "
        f"{args.size} (0: all), keyword mode; {summary}.\n\n{body}"
    )
    publish("sorted-topic", text, args.write)


if __name__ == "__main__":
    main()
