"""The reliability campaign; writes its figures to docs/RELIABILITY.md.

    .venv/bin/python bench/reliability.py [--trials 20] [--examples 150] [--profile thorough]

1. Crash recovery: ``papersift import`` / ``papersift index`` subprocesses on a small real
   corpus are killed with SIGKILL at random moments; after each, a restart (what ``serve``
   does on start: sync the keyword index from the store) and then ``papersift doctor`` plus
   our own check (store count == Tantivy docs, no duplicate ids, vectors a subset of papers).
2. Property tests (``tests/test_properties.py``) under the ``thorough`` Hypothesis profile.
3. API fuzzing (``tests/test_fuzz_api.py``): schemathesis against a ``papersift serve``
   process over the recovered data directory, every operation, valid and invalid requests.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
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

from engine.datadir import DataDir  # noqa: E402
from tests.corpus import make_config, sample_records, write_jsonl  # noqa: E402

BIN = Path(sys.executable).parent
PAPERSIFT = [str(BIN / "papersift")]
DOC = ROOT / "docs" / "RELIABILITY.md"


def log(message: str) -> None:
    print(f"[reliability] {message}", file=sys.stderr, flush=True)


def consistency(config_path: Path) -> list[str]:
    """Restart as ``serve`` does, then compare the store with both indexes; problems found."""
    from papersift.config import load_config

    data = DataDir(load_config(config_path, env={}), create=True)
    try:
        data.sync_lexical()
        problems = []
        papers, docs = data.store.count(), data.lexical.num_docs
        if papers != docs:
            problems.append(f"store has {papers} papers, Tantivy {docs} documents")
        with data.store.reading() as db:
            dup = db.execute(
                "SELECT count(*) FROM (SELECT arxiv_id FROM papers GROUP BY arxiv_id "
                "HAVING count(*) > 1)"
            ).fetchone()[0]
            docids = {r[0] for r in db.execute("SELECT docid FROM papers")}
        if dup:
            problems.append(f"{dup} arXiv ids stored twice")
        import faiss  # the ids held by the FAISS id map (no public accessor: a check only)

        held = faiss.vector_to_array(data.vectors._index.id_map).tolist()
        stray = [d for d in held if d not in docids]
        if stray:
            problems.append(f"{len(stray)} vectors of papers not in the store")
        return problems
    finally:
        data.close()


def doctor(config_path: Path) -> tuple[bool, str]:
    r = subprocess.run(
        [*PAPERSIFT, "doctor", "--config", str(config_path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        return False, (r.stderr or r.stdout).strip()[-300:]
    bad = [c for c in report["checks"] if c["status"] == "FAIL"]
    return r.returncode == 0 and not bad, "; ".join(f"{c['name']}: {c['detail']}" for c in bad)


def crash_loop(root: Path, trials: int, rng: random.Random) -> dict[str, Any]:
    config = make_config(root)
    config_path = root / "config.toml"
    chunks = [write_jsonl(root / f"part{i}.jsonl", sample_records(every=60 + i)) for i in range(3)]
    survived, killed, failures, kinds = 0, 0, [], {"import": 0, "index": 0}
    for trial in range(1, trials + 1):
        kind = rng.choice(["import", "index", "index"]) if trial > 1 else "import"
        args = [kind, "--config", str(config_path)]
        if kind == "import":
            args.append(str(rng.choice(chunks)))
        proc = subprocess.Popen(
            [*PAPERSIFT, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # An import of ~100 papers takes 1-2 s, an index run (model load, then
        # embedding) much longer: kill both somewhere in the middle of their work.
        delay = rng.uniform(0.4, 1.5) if kind == "import" else rng.uniform(1.0, 10.0)
        try:
            proc.wait(timeout=delay)
            finished = True
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            finished = False
        kinds[kind] += 1
        killed += not finished
        problems = consistency(config_path)
        ok, detail = doctor(config_path)
        if not ok:
            problems.append(f"doctor: {detail}")
        state = "finished" if finished else f"killed after {delay:.1f}s"
        if problems:
            failures.append(f"trial {trial} ({kind}, {state}): {'; '.join(problems)}")
        else:
            survived += 1
        log(f"crash trial {trial}/{trials}: {kind} {state}: {problems or 'OK'}")
    # Imports and the backlog run to the end; then every paper has its vector.
    for chunk in chunks:
        subprocess.run(
            [*PAPERSIFT, "import", "--config", str(config_path), str(chunk)],
            check=True,
            capture_output=True,
        )
    subprocess.run(
        [*PAPERSIFT, "index", "--config", str(config_path)], check=True, capture_output=True
    )
    final = consistency(config_path)
    ok, detail = doctor(config_path)
    data = DataDir(config)
    embedded, papers = data.store.embedded_count(data.embedder.model_id), data.store.count()
    data.close()
    return {
        "trials": trials,
        "survived": survived,
        "killed": killed,
        "kinds": kinds,
        "failures": failures,
        "final_ok": ok and not final and embedded == papers,
        "final_detail": "; ".join([*final, detail]) or f"{papers} papers, {embedded} embedded",
        "config": config_path,
    }


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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def fuzz(config_path: Path, examples: int, work: Path) -> dict[str, Any]:
    port = _free_port()
    server = subprocess.Popen(
        [*PAPERSIFT, "serve", "--config", str(config_path), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.2)
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
        failure = "" if r.returncode == 0 else r.stdout.strip().splitlines()[-1]
        return {"ok": r.returncode == 0, "counts": counts, "failure": failure}
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def write_doc(
    args: argparse.Namespace,
    crash: dict[str, Any],
    props: dict[str, Any],
    fz: dict[str, Any],
    seconds: float,
) -> None:
    c = fz["counts"]
    failures = "\n".join(f"- {f}" for f in crash["failures"]) or "- none"
    command = (
        f"python bench/reliability.py --trials {args.trials} --examples {args.examples} "
        f"--profile {args.profile} --seed {args.seed}"
    )
    fuzzed = (
        f"{c.get('requests', 0)} requests over {c.get('operations', 0)} operations: "
        f"{c.get('2xx', 0)} 2xx, {c.get('3xx', 0)} 3xx, {c.get('4xx', 0)} 4xx, "
        f"**{c.get('5xx', 0)} 5xx**; schema violations: **{0 if fz['ok'] else 'see below'}**"
    )
    kinds = crash["kinds"]
    rows = "\n".join(
        f"| {name} | {figure} |"
        for name, figure in [
            ("API fuzzing (schemathesis, every operation, valid and invalid requests)", fuzzed),
            (
                f"Property tests (Hypothesis, profile `{args.profile}`)",
                f"{props['examples']} examples; {props['summary']}",
            ),
            (
                "Crash recovery (SIGKILL during import / index)",
                f"**{crash['survived']} of {crash['trials']} trials survived** "
                f"({kinds['import']} import, {kinds['index']} index runs; {crash['killed']} killed "
                "mid-run, the rest finished first)",
            ),
            (
                "After the final backlog run",
                f"{'consistent' if crash['final_ok'] else 'INCONSISTENT'}: {crash['final_detail']}",
            ),
        ]
    )
    DOC.write_text(
        f"""# Reliability

Produced by `{command}` (or `make reliability`) on
{datetime.now(UTC):%Y-%m-%d %H:%M} UTC in {seconds / 60:.1f} minutes. Rerun it to refresh
these figures; the bounded versions of the same checks run in the test suite.

| Campaign | Figure |
|---|---|
{rows}

## What each campaign checks

- **API fuzzing**: a `papersift serve` process over the data directory the crash loop left
  behind; schemathesis generates requests from our own `/openapi.json` and checks every
  response: no 5xx, status code, content type, headers and body as documented. Three checks
  are off: "schema-valid request rejected" (our parameter schemas are looser than the
  validation, e.g. no documented maximum page), "missing auth header accepted" (the admin API
  answers 404 while no token is configured) and "schema-violating request accepted" (an empty
  parameter such as `sort=` deliberately means "not given", as HTML forms send it).
- **Property tests**: the query parser, `arxiv_id_in`, `SearchEngine.search` in each mode,
  the paper-path router and slugs, the author-name splitter and the snapshot importer on
  arbitrary input: only the documented exceptions (`QueryError`, `ValueError`).
- **Crash recovery**: after each kill, a restart (the keyword index is synced from the
  SQLite store, as `serve` does), then `papersift doctor` must report no FAIL and the store,
  Tantivy and FAISS must agree: same paper count, no duplicate ids, no vector without a paper.

## Failures

{failures}
{"" if fz["ok"] else "- fuzzing: " + fz["failure"]}
{"" if props["ok"] else "- properties: " + props["summary"]}
""",
        encoding="utf-8",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20, help="crash-recovery trials")
    parser.add_argument("--examples", type=int, default=120, help="fuzz examples per operation")
    parser.add_argument("--profile", default="thorough", help="Hypothesis profile")
    parser.add_argument("--seed", type=int, default=9)
    args = parser.parse_args()
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="papersift-reliability-") as tmp:
        work = Path(tmp)
        crash = crash_loop(work, args.trials, random.Random(args.seed))
        log(f"crash loop: {crash['survived']}/{crash['trials']} survived")
        props = properties(args.profile)
        log(f"properties: {props['examples']} examples, {props['summary']}")
        fz = fuzz(crash["config"], args.examples, work)
        log(f"fuzzing: {fz['counts']}")
    write_doc(args, crash, props, fz, time.monotonic() - start)
    log(f"wrote {DOC}")
    ok = crash["survived"] == crash["trials"] and crash["final_ok"] and props["ok"] and fz["ok"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
