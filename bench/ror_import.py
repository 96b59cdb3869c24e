"""`import-ror` at registry scale: seconds per 1,000 organisations as the registry grows.

    .venv/bin/python bench/ror_import.py [--sizes 3000,12000,35990] [--old CHECKOUT]
        [--old-sizes 3000,6000] [--write]

Each figure is a fresh process of one checkout importing the first N organisations of the
shared extract (``../shared/data/ror``) into an empty store, then importing the same N again
(every row an update, as a newer dump does). Reading and parsing the dump is timed apart, so
the columns show the store's cost. ``--old`` times another checkout (``git worktree add DIR
main``) in alternation with this one. Last, ``papersift import-ror`` of the whole extract as
a user runs it (a real process, wall time, reading included).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, load_average, log, machine_info, publish, table

# The shared data folder sits beside the repository (beside the worktrees' parent for one).
SHARED = next(
    (p for p in (ROOT.parent / "shared", ROOT.parent.parent / "shared") if p.is_dir()),
    ROOT.parent / "shared",
)
EXTRACT = SHARED / "data" / "ror" / "ror_records_latest_v2.jsonl.gz"

# Run inside a checkout: its own store code on the same organisations.
_CHILD = """
import json, sys, tempfile, time
from itertools import islice
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from papersift.engine.institutions import Institutions
from papersift.engine.store import PaperStore
from papersift.engine.ror import read_ror

n = int(sys.argv[3])
t0 = time.perf_counter()
orgs = list(islice(read_ror(Path(sys.argv[2])), n))
read = time.perf_counter() - t0
with tempfile.TemporaryDirectory() as tmp:
    store = PaperStore(Path(tmp) / "papers.sqlite")
    reg = Institutions(store)
    t0 = time.perf_counter()
    reg.import_organisations(orgs)
    fresh = time.perf_counter() - t0
    t0 = time.perf_counter()
    reg.import_organisations(orgs)
    again = time.perf_counter() - t0
    count = reg.count()
    store.close()
print(json.dumps({"n": len(orgs), "count": count, "read": read, "fresh": fresh, "again": again}))
"""


def run_child(checkout: Path, n: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(checkout), str(EXTRACT), str(n)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    result: dict[str, float] = json.loads(out.strip().splitlines()[-1])
    return result


def cli_import() -> tuple[float, str]:
    """Wall seconds of ``papersift import-ror`` on the whole extract, and its output line."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "PAPERSIFT_DATA_DIR": tmp, "PAPERSIFT_DATA_BOOTSTRAP": "none"}
        t0 = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-m", "papersift", "import-ror", str(EXTRACT)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
            cwd=ROOT,
        )
        return time.perf_counter() - t0, done.stdout.strip()


def _row(label: str, r: dict[str, float], load: str) -> list[str]:
    n = r["n"]
    return [
        label,
        f"{n:,.0f}",
        f"{r['read']:.2f}",
        f"{r['fresh']:.2f}",
        f"{1000 * r['fresh'] / n:.3f}",
        f"{r['again']:.2f}",
        f"{1000 * r['again'] / n:.3f}",
        load,
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="3000,12000,35990")
    ap.add_argument("--old", type=Path, help="another checkout to time in alternation")
    ap.add_argument("--old-sizes", default="3000,6000")
    ap.add_argument("--write", action="store_true", help="write the section of RESULTS.md")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    old_sizes = [int(s) for s in args.old_sizes.split(",")] if args.old else []
    rows = []
    for n in sorted(set(sizes) | set(old_sizes)):
        for label, checkout, wanted in (("before", args.old, old_sizes), ("after", ROOT, sizes)):
            if checkout is None or n not in wanted:
                continue
            log(f"{label}: {n} organisations")
            r = run_child(checkout, n)
            rows.append(_row(label, r, load_average()))
            log(f"  {r}")
    wall, line = cli_import()
    log(f"papersift import-ror: {wall:.1f} s ({line})")
    headers = [
        "code",
        "organisations",
        "read s",
        "import s",
        "s per 1k",
        "re-import s",
        "re-import s per 1k",
        "load",
    ]
    info = machine_info()
    body = "\n".join(
        [
            "## import-ror at registry scale (issue 23)",
            "",
            f"Measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {info['cpu']}, "
            f"{info['cores']} cores, revision {info['revision']}. `.venv/bin/python "
            "bench/ror_import.py" + (" --old ../main" if args.old else "") + " --write`. "
            "The first N organisations of the 35,990-record extract into an empty store "
            "(`import s`), then the same N again (`re-import s`, every row an update); reading "
            "the dump apart (`read s`). `before` is the code before the fix (a full scan of "
            "`institution_names` per organisation), `after` this checkout; runs alternate.",
            "",
            table(headers, rows),
            "",
            f"`papersift import-ror` of the whole extract, a real process, reading included: "
            f"**{wall:.1f} s** wall ({line}); load {load_average()}.",
        ]
    )
    publish("ror-import", body, args.write)


if __name__ == "__main__":
    main()
