"""The ROR affiliation matcher on ROR's own gold sets, through the product's code path.

    .venv/bin/python bench/ror_match.py [--write]

The shared extract (35,990 organisations, ``../shared/data/ror``) is imported into an empty
store with ``Institutions.import_organisations`` (what ``papersift import-ror`` runs), and
every gold string goes through ``engine.affiliation_match.explain``, the function behind
``papersift match-affiliation`` and ``/api/v1/institutions/match`` (enrichment calls the
same cached matcher). Precision = right / answered; recall = right / strings that have a
correct ROR id; "in extract" counts only strings whose correct organisation the extract
holds (the extract is a third of the registry). The first 600 affiliations are the test
fixture (tests/fixtures/ror); the other 2,400 are reported apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import load_average, log, machine_info, publish, table
from bench.ror_import import EXTRACT
from papersift.engine.affiliation_match import explain, matcher
from papersift.engine.institutions import Institutions
from papersift.engine.ror import parse_ror_id, read_ror
from papersift.engine.store import PaperStore

GOLD = EXTRACT.parent / "affiliation_gold"
FIXTURE_SIZE = 600  # the first entries, copied into tests/fixtures/ror


def _gold() -> dict[str, list[tuple[str, set[str]]]]:
    affs = json.loads((GOLD / "dataset_affiliations_crossref_2024_02_19.json").read_text())
    names = json.loads((GOLD / "dataset_names.json").read_text())

    def ids(raw: Iterable[str]) -> set[str]:
        return {r for x in raw if (r := parse_ror_id(x)) is not None}

    a = [(g["affiliation"], ids(g["ror_ids"])) for g in affs]
    return {
        "affiliations, all 3,000": a,
        "affiliations 1-600 (the test fixture)": a[:FIXTURE_SIZE],
        "affiliations 601-3,000": a[FIXTURE_SIZE:],
        "organisation names (1,000)": [(g["affiliation"], ids([g["ror-id"]])) for g in names],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write the section of RESULTS.md")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        store = PaperStore(Path(tmp) / "papers.sqlite")
        registry = Institutions(store)
        t0 = time.perf_counter()
        registry.import_organisations(read_ror(EXTRACT))
        log(f"imported {registry.count()} in {time.perf_counter() - t0:.1f} s")
        t0 = time.perf_counter()
        held = set(matcher(registry).orgs)
        build = time.perf_counter() - t0
        for name, gold in _gold().items():
            right = wrong = 0
            t0 = time.perf_counter()
            for text, want in gold:
                found = explain(registry, text).explanation.match
                if found is not None:
                    right += found.ror_id in want
                    wrong += found.ror_id not in want
            per = 1000 * (time.perf_counter() - t0) / len(gold)
            answerable = sum(bool(w) for _, w in gold)
            in_extract = sum(bool(w & held) for _, w in gold)
            rows.append(
                [
                    name,
                    f"{len(gold):,}",
                    f"{answerable:,}",
                    f"{in_extract:,}",
                    f"{right:,}",
                    f"{wrong:,}",
                    f"{right / max(1, right + wrong):.3f}",
                    f"{right / max(1, answerable):.3f}",
                    f"{right / max(1, in_extract):.3f}",
                    f"{per:.2f}",
                ]
            )
            log(f"{name}: {rows[-1]}")
        store.close()
    info = machine_info()
    body = "\n".join(
        [
            "## ROR affiliation matching through the product (issue 23)",
            "",
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
            f"revision {info['revision']}; load {load_average()}. `.venv/bin/python "
            "bench/ror_match.py --write`: the 35,990-organisation extract imported with "
            "`Institutions.import_organisations`, every gold string through "
            "`engine.affiliation_match.explain` (the CLI's and the API's function; enrichment "
            "uses the same cached matcher). Gold: ROR's own evaluation sets "
            "(`../shared/data/ror/affiliation_gold`). The matcher's rules predate this run and "
            "were written looking at these sets (the first 600 affiliations are a test fixture), "
            "so the rows are not a clean hold-out; nothing was tuned for this table.",
            "",
            table(
                [
                    "gold set",
                    "strings",
                    "with an answer",
                    "answer in extract",
                    "right",
                    "wrong",
                    "precision",
                    "recall",
                    "recall in extract",
                    "ms per match",
                ],
                rows,
            ),
            "",
            f"Building the matcher from the store (cached until the next import): {build:.2f} s.",
        ]
    )
    publish("ror-match", body, args.write)


if __name__ == "__main__":
    main()
