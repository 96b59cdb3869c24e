"""The reliability campaigns at full size; writes their figures to docs/RELIABILITY.md
(``make reliability``).

    .venv/bin/python bench/reliability.py [--only fuzz,crash,...] [sizes, see --help]

Every campaign runs real processes on 127.0.0.1 (the project's CLI and server, recorded
upstream responses served locally) and stops by itself (bounded counts, timeouts):

- ``fuzz``: schemathesis over every operation, stateless and stateful (``reliability_fuzz``);
- ``crash``: SIGKILL at random moments of import, embedding (in process and on a Dask
  cluster), harvest, ROR import and enrichment, each followed by checks (``reliability_crash``);
- ``commit``: big imports killed while Tantivy commits them;
- ``load``: searches during harvest, import, embedding and a full reindex (``reliability_load``);
- ``props``: the property tests under the ``thorough`` Hypothesis profile;
- ``hostile``: hostile records in every input format (``reliability_hostile``);
- ``writers``: concurrent writing commands;
- ``signin``: hostile and ordinary account traffic, then a throttled burst
  (``reliability_signin``).

Each campaign's result, command, date, duration and load average is kept in ``--results``
(JSON), and the document is written from every result there, so campaigns can run apart.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.reliability_crash import commit_loop, crash_loop, log  # noqa: E402
from bench.reliability_doc import write_doc  # noqa: E402
from bench.reliability_fuzz import fuzz_campaign  # noqa: E402
from bench.reliability_hostile import hostile_campaign, writers_campaign  # noqa: E402
from bench.reliability_load import load_campaign  # noqa: E402
from bench.reliability_signin import signin_campaign  # noqa: E402

BIN = Path(sys.executable).parent
CAMPAIGNS = ("fuzz", "crash", "commit", "load", "props", "hostile", "writers", "signin")
RESULTS = ROOT / "bench" / ".cache" / "reliability"


def properties(profile: str) -> dict[str, Any]:
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile}
    cmd = [str(BIN / "pytest"), "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
           "tests/test_properties.py"]  # fmt: skip
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600)
    examples = sum(int(n) for n in re.findall(r"(\d+) passing, \d+ failing", r.stdout))
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-300:]
    return {"ok": r.returncode == 0, "examples": examples, "summary": summary}


class LoadSampler:
    """The 1-minute load average every 5 s while a campaign runs."""

    def __init__(self) -> None:
        self.samples: list[float] = [os.getloadavg()[0]]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(5):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def figures(self) -> dict[str, float]:
        s = self.samples
        return {"min": min(s), "max": max(s), "mean": sum(s) / len(s)}


def _command(name: str, args: argparse.Namespace) -> str:
    """The command as run, with the sizes that applied to campaign ``name``."""
    sizes = {
        "fuzz": f"--examples {args.examples} --scenarios {args.scenarios} --steps {args.steps}",
        "crash": f"--trials {args.trials}",
        "commit": f"--commit-trials {args.commit_trials}",
        "load": f"--load-seconds {args.load_seconds:g}",
        "props": f"--profile {args.profile}",
        "hostile": f"--hostile-rounds {args.hostile_rounds}",
        "writers": f"--writer-rounds {args.writer_rounds}",
        "signin": f"--signin-attempts {args.signin_attempts}",
    }[name]
    given = " ".join(["bench/reliability.py", *sys.argv[1:]])
    return f".venv/bin/python {given} ({sizes}, seed {args.seed})"


def _jobs(args: argparse.Namespace, work: Path) -> dict[str, Callable[[], dict[str, Any]]]:
    rng = random.Random(args.seed)
    return {
        "fuzz": lambda: fuzz_campaign(work / "fuzz", args.examples, args.scenarios, args.steps),
        "crash": lambda: crash_loop(work / "crash", args.trials, rng),
        "commit": lambda: commit_loop(work / "commit", args.commit_trials, rng),
        "load": lambda: load_campaign(work / "load", args.load_seconds),
        "props": lambda: properties(args.profile),
        "hostile": lambda: hostile_campaign(work / "hostile", args.hostile_rounds, rng),
        "writers": lambda: writers_campaign(work / "writers", args.writer_rounds),
        "signin": lambda: signin_campaign(work / "signin", args.signin_attempts, rng),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default=",".join(CAMPAIGNS), help="campaigns, comma-separated")
    parser.add_argument("--examples", type=int, default=350, help="fuzz examples per operation")
    parser.add_argument("--scenarios", type=int, default=300, help="stateful fuzz scenarios")
    parser.add_argument("--steps", type=int, default=10, help="calls per stateful scenario")
    parser.add_argument("--trials", type=int, default=100, help="crash-recovery trials")
    parser.add_argument("--commit-trials", type=int, default=4, help="kills in a big commit")
    parser.add_argument("--load-seconds", type=float, default=30, help="idle load phase")
    parser.add_argument("--profile", default="thorough", help="Hypothesis profile")
    parser.add_argument("--hostile-rounds", type=int, default=12, help="poisoned imports")
    parser.add_argument("--writer-rounds", type=int, default=30, help="pairs of writers at once")
    parser.add_argument("--signin-attempts", type=int, default=3000, help="account requests")
    parser.add_argument("--seed", type=int, default=24)
    parser.add_argument("--results", type=Path, default=RESULTS, help="where results are kept")
    parser.add_argument("--doc-only", action="store_true", help="only write the document")
    args = parser.parse_args()
    if args.doc_only:
        write_doc(args.results)
        return 0
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = set(names) - set(CAMPAIGNS)
    if unknown:
        parser.error(f"unknown campaigns: {', '.join(sorted(unknown))}")
    args.results.mkdir(parents=True, exist_ok=True)
    ok = True
    with tempfile.TemporaryDirectory(prefix="papersift-reliability-") as tmp:
        work = Path(tmp)
        for name in CAMPAIGNS:
            (work / name).mkdir()
        jobs = _jobs(args, work)
        for name in names:
            started, start = datetime.now(UTC), time.monotonic()
            log(f"{name}: started")
            with LoadSampler() as load:
                try:
                    result = jobs[name]()
                except Exception as exc:  # the campaign itself broke: say so, go on
                    result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"[:2000]}
            result.pop("config", None)
            ok = ok and bool(result.get("ok"))
            saved = {"result": result, "command": _command(name, args),
                     "date": f"{started:%Y-%m-%d %H:%M}", "seconds": time.monotonic() - start,
                     "load": load.figures()}  # fmt: skip
            (args.results / f"{name}.json").write_text(json.dumps(saved, indent=1, default=str))
            log(f"{name}: {'OK' if result.get('ok') else 'FAILED'} in {saved['seconds']:.0f} s")
    write_doc(args.results)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
