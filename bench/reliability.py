"""The reliability campaign; writes its figures to docs/RELIABILITY.md (``make reliability``).

    .venv/bin/python bench/reliability.py [--trials 16] [--commit-trials 3] [--examples 80]

1. Crash recovery: ``papersift import`` / ``index`` / ``harvest`` subprocesses (the harvest
   from recorded OAI-PMH pages on a local server) on a small real corpus are killed with
   SIGKILL at random moments or while a page's keyword-index commit is writing; big imports
   are killed while Tantivy commits them. After each kill a restart (what ``serve`` does on
   start: sync the keyword index from the store), ``papersift doctor`` and our own check
   (store, Tantivy and FAISS hold the same papers, no duplicates); at the end every run is
   completed and the paper set compared with uninterrupted runs (``bench/reliability_crash.py``).
2. Load while writing: searches against ``papersift serve`` while other processes harvest,
   import and embed (``bench/reliability_load.py``).
3. Property tests (``tests/test_properties.py``) under the ``thorough`` Hypothesis profile.
4. API fuzzing (``tests/test_fuzz_api.py``): schemathesis against a ``papersift serve``
   process over the recovered data directory, every operation, valid and invalid requests.
5. Hostile records in every input format and concurrent writers (issue 24,
   ``bench/reliability_hostile.py``); ``--only-issue24`` runs just these.
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
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.reliability_crash import commit_loop, crash_loop, log  # noqa: E402
from bench.reliability_hostile import hostile_campaign, writers_campaign  # noqa: E402
from bench.reliability_load import load_campaign  # noqa: E402
from tests.load_kit import serve  # noqa: E402

BIN = Path(sys.executable).parent
DOC = ROOT / "docs" / "RELIABILITY.md"


def properties(profile: str) -> dict[str, Any]:
    env = {**os.environ, "HYPOTHESIS_PROFILE": profile}
    cmd = [
        str(BIN / "pytest"),
        "-q",
        "-p",
        "no:cacheprovider",
        "--hypothesis-show-statistics",
        "tests/test_properties.py",
    ]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    examples = sum(int(n) for n in re.findall(r"(\d+) passing, \d+ failing", r.stdout))
    summary = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else r.stderr[-300:]
    return {"ok": r.returncode == 0, "examples": examples, "summary": summary}


def fuzz(config_path: Path, examples: int, work: Path) -> dict[str, Any]:
    with serve(config_path, work / "fuzz-serve.log") as url:
        report = work / "fuzz.json"
        env = {
            **os.environ,
            "FUZZ_URL": url,
            "FUZZ_EXAMPLES": str(examples),
            "FUZZ_REPORT": str(report),
        }
        cmd = [
            str(BIN / "pytest"),
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_fuzz_api.py",
            "-k",
            "campaign",
        ]
        r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
        counts = json.loads(report.read_text()) if report.exists() else {}
        failure = "" if r.returncode == 0 else _failure_line(r.stdout)
        return {"ok": r.returncode == 0, "counts": counts, "failure": failure}


def _failure_line(stdout: str) -> str:
    lines = [line for line in stdout.splitlines() if line.startswith(("E ", "FAILED"))]
    return " / ".join(lines[:3])[:600] or stdout.strip()[-300:]


def _row(name: str, figure: str) -> str:
    return f"| {name} | {figure} |"


def _crash_rows(crash: dict[str, Any], commit: dict[str, Any]) -> list[str]:
    kinds = ", ".join(f"{n} {k}" for k, n in crash["kinds"].items())
    return [
        _row(
            "Crash recovery: SIGKILL at random during import / index / harvest, or during a "
            "harvest page's index commit",
            f"**{crash['survived']} of {crash['trials']} trials survived** ({kinds}; "
            f"{crash['killed']} killed mid-run, the rest finished first)",
        ),
        _row(
            "After completing every run (harvest resumed, imports, backlog)",
            f"{'consistent' if crash['final_ok'] else 'INCONSISTENT'}: {crash['final_detail']}",
        ),
        _row(
            f"Crash recovery: SIGKILL while Tantivy commits an import of {commit['papers']} papers",
            f"**{commit['survived']} of {commit['trials']} trials survived** "
            f"({commit['in_commit']} killed inside the commit, the rest finished first)",
        ),
        _row(
            "After completing the big imports",
            f"{'consistent' if commit['final_ok'] else 'INCONSISTENT'}: {commit['final_detail']}",
        ),
    ]


def _load_rows(load: dict[str, Any]) -> list[str]:
    idle, busy = load["idle"], load["busy"]
    return [
        _row(
            f"Search latency, idle ({load['clients']} clients, {idle['seconds']:.0f} s)",
            f"{idle['requests']} requests, {idle['failed']} failed; "
            f"p50 {idle['p50']:.0f} ms, p99 {idle['p99']:.0f} ms",
        ),
        _row(
            f"Search latency while harvesting {load['harvested']} papers, importing "
            f"{load['batch']} and embedding them ({busy['seconds']:.0f} s)",
            f"{busy['requests']} requests, **{busy['failed']} failed**; "
            f"p50 {busy['p50']:.0f} ms, p99 {busy['p99']:.0f} ms",
        ),
        _row(
            "Harvested papers findable through the server",
            f"by keyword {load['keyword_findable_s']:.1f} s after the harvest ended, by meaning "
            f"{load['semantic_findable_s']:.1f} s after the embedding ended"
            + (f"; NOT findable: {load['not_findable']}" if load["not_findable"] else ""),
        ),
    ]


def _issue24_rows(hostile: dict[str, Any], writers: dict[str, Any]) -> list[str]:
    return [
        _row(
            f"Hostile records: {hostile['rounds']} poisoned snapshots (lone surrogates, huge "
            "versions, markdown/HTML injection), each imported twice, and an arXivRaw page "
            "with a huge version harvested; then the server's integer routes with 5,000 digits",
            f"{hostile['imported']} papers landed, {hostile['skipped']} records reported and "
            f"skipped, {hostile['harvested']} harvested around the bad one, "
            f"{hostile['requests']} requests; **{len(hostile['failures'])} failures**",
        ),
        _row(
            f"Concurrent writers: {writers['rounds']} rounds of two writing commands at once",
            f"{writers['finished']} finished, {writers['refused']} refused in one line (lock "
            f"held); **{len(writers['failures'])} failures** (tracebacks, other errors, or an "
            "inconsistent data directory)",
        ),
    ]


def write_doc(args: argparse.Namespace, r: dict[str, Any], seconds: float) -> None:
    crash, commit, load, props, fz = r["crash"], r["commit"], r["load"], r["props"], r["fuzz"]
    c = fz["counts"]
    command = (
        f"python bench/reliability.py --trials {args.trials} --commit-trials "
        f"{args.commit_trials} --load-seconds {args.load_seconds:g} --examples {args.examples} "
        f"--profile {args.profile} --seed {args.seed}"
    )
    fuzzed = (
        f"{c.get('requests', 0)} requests over {c.get('operations', 0)} operations: "
        f"{c.get('2xx', 0)} 2xx, {c.get('3xx', 0)} 3xx, {c.get('4xx', 0)} 4xx, "
        f"**{c.get('5xx', 0)} 5xx**; failed checks: **{0 if fz['ok'] else 'see below'}** "
        f"({c.get('excused', 0)} excused, see below)"
    )
    rows = "\n".join(
        [
            _row("API fuzzing (schemathesis, every operation, valid and invalid requests)", fuzzed),
            _row(
                f"Property tests (Hypothesis, profile `{args.profile}`)",
                f"{props['examples']} examples; {props['summary']}",
            ),
            *_crash_rows(crash, commit),
            *_load_rows(load),
            *_issue24_rows(r["hostile"], r["writers"]),
        ]
    )
    failures = [*crash["failures"], *commit["failures"]]
    failures += [f"load: {f}" for f in load["idle"]["failures"] + load["busy"]["failures"]]
    if not fz["ok"]:
        failures.append(f"fuzzing: {fz['failure']}")
    if not props["ok"]:
        failures.append(f"properties: {props['summary']}")
    failures += [f"hostile: {f}" for f in r["hostile"]["failures"]]
    failures += [f"writers: {f}" for f in r["writers"]["failures"]]
    listed = "\n".join(f"- {f}" for f in failures) or "- none"
    template = (Path(__file__).parent / "reliability_doc.md").read_text(encoding="utf-8")
    DOC.write_text(
        template.format(
            command=command,
            when=f"{datetime.now(UTC):%Y-%m-%d %H:%M}",
            minutes=f"{seconds / 60:.1f}",
            rows=rows,
            failures=listed,
        ),
        encoding="utf-8",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=16, help="crash-recovery trials")
    parser.add_argument("--commit-trials", type=int, default=3, help="kills in a big commit")
    parser.add_argument("--load-seconds", type=float, default=15, help="idle load phase")
    parser.add_argument("--examples", type=int, default=80, help="fuzz examples per operation")
    parser.add_argument("--profile", default="thorough", help="Hypothesis profile")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--hostile-rounds", type=int, default=3, help="poisoned imports")
    parser.add_argument("--writer-rounds", type=int, default=6, help="pairs of writers at once")
    parser.add_argument(
        "--only-issue24",
        action="store_true",
        help="run only the hostile-record and concurrent-writer campaigns",
    )
    args = parser.parse_args()
    start = time.monotonic()
    rng = random.Random(args.seed)
    r: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="papersift-reliability-") as tmp:
        work = Path(tmp)
        (work / "hostile").mkdir()
        (work / "writers").mkdir()
        r["hostile"] = hostile_campaign(work / "hostile", args.hostile_rounds, rng)
        log(f"hostile records: {r['hostile']}")
        r["writers"] = writers_campaign(work / "writers", args.writer_rounds)
        log(f"concurrent writers: {r['writers']}")
        if args.only_issue24:
            return 0 if r["hostile"]["ok"] and r["writers"]["ok"] else 1
        (work / "crash").mkdir()
        (work / "commit").mkdir()
        (work / "load").mkdir()
        r["crash"] = crash_loop(work / "crash", args.trials, rng)
        log(f"crash loop: {r['crash']['survived']}/{r['crash']['trials']} survived")
        r["commit"] = commit_loop(work / "commit", args.commit_trials, rng)
        log(f"commit loop: {r['commit']['survived']}/{r['commit']['trials']} survived")
        r["load"] = load_campaign(work / "load", args.load_seconds)
        r["props"] = properties(args.profile)
        log(f"properties: {r['props']['examples']} examples, {r['props']['summary']}")
        r["fuzz"] = fuzz(r["crash"]["config"], args.examples, work)
        log(f"fuzzing: {r['fuzz']['counts']}")
    write_doc(args, r, time.monotonic() - start)
    log(f"wrote {DOC}")
    crash, commit = r["crash"], r["commit"]
    ok = (
        crash["survived"] == crash["trials"]
        and commit["survived"] == commit["trials"]
        and crash["final_ok"]
        and commit["final_ok"]
        and r["load"]["ok"]
        and r["props"]["ok"]
        and r["fuzz"]["ok"]
        and r["hostile"]["ok"]
        and r["writers"]["ok"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
