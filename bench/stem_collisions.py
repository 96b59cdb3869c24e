"""How far the English stemmer widens a keyword match set beyond the word's own forms.

    .venv/bin/python bench/stem_collisions.py [--size 0] [--write]

The keyword index stems with Snowball's English stemmer (Porter2, ``engine.lexical``), so a
query word matches every word of its stem: "transformer" also matches "transformation",
"operator" matches "operation", "generalization" matches "general" and "generally". A match
set is what totals, date sorts and search feeds show (``engine.match``). For each word of a
fixed list (chosen before measuring: common arXiv terms whose stem is shared by other
words, and controls whose stem is not), keyword mode sorted newest first: the number of
matches, and how many of the newest 50 hold the word itself or its plural / singular in the
title or abstract. The rest hold only another word of the same stem.
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import scale_data
from bench.common import bench_config, load_average, machine_info, publish, scale_parser, table
from papersift.core.accents import accented
from papersift.engine.lexical_schema import text_analyzer
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine

WORDS = (
    "transformer", "operator", "generalization", "computing", "organization", "university",
    "learning", "attention", "neural", "probabilistic",
)  # fmt: skip
NEWEST = 50


def own_forms(word: str) -> re.Pattern[str]:
    """The word, its plural and (for a plural) its singular, as whole words."""
    base = word[:-1] if word.endswith("s") and not word.endswith("ss") else word
    stem = base[:-1] if base.endswith("y") else base
    forms = {word, base, base + "s", base + "es", stem + "ies"}
    return re.compile(r"\b(" + "|".join(sorted(map(re.escape, forms))) + r")\b")


def main() -> None:
    ap = scale_parser(__doc__, queries=None, rounds=1)
    args = ap.parse_args()
    engine = open_engine(bench_config(scale_data.data_path(args.size)))
    analyzer = text_analyzer()
    rows = []
    try:
        for word in WORDS:
            result = engine.search(
                SearchRequest(word, mode="keyword", sort="newest", page_size=NEWEST)
            )
            pattern = own_forms(word)
            own = sum(
                1 for h in result.hits
                if pattern.search(accented(f"{h.paper.title} {h.paper.abstract}").lower())
            )  # fmt: skip
            rows.append([
                word, analyzer.analyze(word)[0], f"{result.total:,}",
                f"{own} of {len(result.hits)}",
            ])  # fmt: skip
    finally:
        engine.close()
    info = machine_info()
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    body = (
        f"`.venv/bin/python bench/stem_collisions.py --size {args.size}` ({stamp}, revision "
        f"{info['revision']}, load {load_average()}): keyword mode, newest first.\n\n"
        + table(["query", "stem", "matches", f"newest {NEWEST} holding the word itself"], rows)
    )
    publish("stem-collisions", body, args.write)


if __name__ == "__main__":
    main()
