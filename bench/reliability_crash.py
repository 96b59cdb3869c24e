"""Crash-recovery campaigns of ``bench/reliability.py``: SIGKILL at random moments of import,
embedding and harvest runs, and while the keyword index commits a big import.

After every kill: a restart (the keyword index synced from the store, as ``serve`` does),
our own comparison of store, Tantivy and FAISS, and ``papersift doctor`` (no FAIL). At the
end every interrupted run is completed; the paper set must then equal that of uninterrupted
runs, and every paper must have its vector.
"""

from __future__ import annotations

import random
import sys
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from papersift.engine.datadir import DataDir  # noqa: E402
from papersift.indexer.build import import_files  # noqa: E402
from papersift.indexer.harvest import harvest  # noqa: E402
from tests.corpus import demo_records, make_config, sample_records, write_jsonl  # noqa: E402
from tests.reliability_kit import (  # noqa: E402
    HARVEST,
    PAPERSIFT,
    WINDOW,
    check,
    harvest_cmd,
    kill_at,
    kill_in_commit,
    oai_server,
    paper_set,
    run,
)

KINDS = ["import", "index", "index", "harvest", "harvest", "harvest commit"]


def log(message: str) -> None:
    print(f"[reliability] {message}", file=sys.stderr, flush=True)


def _reference(
    root: Path, files: list[Path], url: str | None = None
) -> dict[str, tuple[int, str, str]]:
    """The papers of uninterrupted runs: a harvest of the recorded window (with ``url``),
    then imports of ``files``."""
    root.mkdir()
    data = DataDir(make_config(root, harvest=HARVEST))
    try:
        if url is not None:
            harvest(data, url=url, date_from=date.fromisoformat(WINDOW))
        import_files(data, files)
    finally:
        data.close()
    return paper_set(root / "config.toml")


def _trial(kind: str, config_path: Path, chunks: list[Path], url: str, rng: random.Random) -> str:
    """Run one command of ``kind`` and kill it; describes what happened."""
    cfg = str(config_path)
    if kind == "import":
        delay = rng.uniform(0.4, 2.0)
        cmd = [*PAPERSIFT, "import", "--config", cfg, str(rng.choice(chunks))]
    elif kind == "index":  # model load, then embedding checkpoints
        delay = rng.uniform(1.0, 10.0)
        cmd = [*PAPERSIFT, "index", "--config", cfg]
    elif kind == "harvest":  # three pages 0.2 s apart, then (half the time) embedding
        embed, updates = rng.random() < 0.5, rng.random() < 0.3
        delay = rng.uniform(0.8, 6.0 if embed else 3.0)
        cmd = harvest_cmd(config_path, url, embed=embed, updates=updates)
        kind = f"harvest{' of updates' if updates else ''}{' + embed' if embed else ''}"
    else:  # kill while one of the per-page keyword-index commits writes its segment
        updates = rng.random() < 0.3
        nth = 1 if updates else rng.randint(1, 3)
        lexical = config_path.parent / "data" / "lexical"
        cmd = harvest_cmd(config_path, url, updates=updates)
        outcome = kill_in_commit(cmd, lexical, rng, nth)
        return f"harvest{' of updates' if updates else ''}, commit {nth}: {outcome}"
    finished = kill_at(cmd, delay)
    return f"{kind} {'finished' if finished else f'killed after {delay:.1f}s'}"


def crash_loop(root: Path, trials: int, rng: random.Random) -> dict[str, Any]:
    """Import, index and harvest runs killed at random; then everything run to the end."""
    config = make_config(root, harvest=HARVEST)
    config_path = root / "config.toml"
    chunks = [write_jsonl(root / f"part{i}.jsonl", sample_records(every=60 + i)) for i in range(3)]
    survived, killed, failures = 0, 0, []
    kinds = {k: 0 for k in dict.fromkeys(KINDS)}
    with oai_server() as url:
        harvested = _reference(root / "harvest-only", [], url)
        reference = _reference(root / "reference", chunks, url)
        for trial in range(1, trials + 1):
            kind = rng.choice(KINDS) if trial > 1 else "import"
            kinds[kind] += 1
            what = _trial(kind, config_path, chunks, url, rng)
            killed += "killed" in what
            problems = check(config_path)
            if problems:
                failures.append(f"trial {trial} ({what}): {'; '.join(problems)}")
            else:
                survived += 1
            log(f"crash trial {trial}/{trials}: {what}: {problems or 'OK'}")
        # Every interrupted run goes to the end; then every paper has its vector.
        run(harvest_cmd(config_path, url))
    for chunk in chunks:
        run([*PAPERSIFT, "import", "--config", str(config_path), str(chunk)])
    run([*PAPERSIFT, "index", "--config", str(config_path)])
    final = check(config_path)
    papers = paper_set(config_path)
    if set(papers) != set(reference):
        final.append(
            f"{len(papers)} papers, uninterrupted runs {len(reference)} "
            f"({len(set(reference) - set(papers))} missing, {len(set(papers) - set(reference))} "
            "extra)"
        )
    changed = [i for i, v in reference.items() if i in papers and papers[i] != v]
    if changed:
        final.append(f"{len(changed)} papers differ from uninterrupted runs: {changed[:5]}")
    data = DataDir(config)
    embedded, count = data.store.embedded_count(data.embedder.model_id), data.store.count()
    data.close()
    if embedded != count:
        final.append(f"{count - embedded} papers without a vector")
    return {
        "trials": trials,
        "survived": survived,
        "killed": killed,
        "kinds": kinds,
        "failures": failures,
        "final_ok": not final,
        "final_detail": "; ".join(final)
        or f"{count} papers ({len(harvested)} harvested), the same as uninterrupted runs, "
        f"field for field; {embedded} embedded",
        "config": config_path,
    }


def commit_loop(root: Path, trials: int, rng: random.Random) -> dict[str, Any]:
    """Big imports (slices of the demo corpus) killed while Tantivy commits them."""
    records = demo_records()
    make_config(root)
    config_path = root / "config.toml"
    size = -(-len(records) // trials)
    slices = [
        write_jsonl(root / f"slice{i}.jsonl", records[i * size : (i + 1) * size])
        for i in range(trials)
    ]
    survived, in_commit, failures = 0, 0, []
    for trial, path in enumerate(slices, 1):
        cmd = [*PAPERSIFT, "import", "--config", str(config_path), str(path)]
        nth = rng.randint(1, 2)  # the import's commit, or the re-index after identities
        outcome = kill_in_commit(cmd, root / "data" / "lexical", rng, nth)
        in_commit += outcome == "killed in commit"
        problems = check(config_path)
        if problems:
            failures.append(f"commit trial {trial} ({outcome}): {'; '.join(problems)}")
        else:
            survived += 1
        log(f"commit trial {trial}/{trials}: {size} papers, commit {nth}: {outcome}: "
            f"{problems or 'OK'}")  # fmt: skip
    for path in slices:
        run([*PAPERSIFT, "import", "--config", str(config_path), str(path)])
    final = check(config_path)
    papers = paper_set(config_path)
    reference = _reference(root / "reference", slices)
    if papers != reference:
        final.append(f"{len(papers)} papers; uninterrupted imports give {len(reference)}")
    return {
        "trials": trials,
        "survived": survived,
        "in_commit": in_commit,
        "papers": size,
        "failures": failures,
        "final_ok": not final,
        "final_detail": "; ".join(final)
        or f"{len(papers)} papers, all in Tantivy, the same as uninterrupted imports",
    }
