"""Crash-recovery campaigns of ``bench/reliability.py``: SIGKILL at random moments of import,
embedding (in process and on a Dask cluster), harvest, ROR import and enrichment runs
(``bench/reliability_trials.py``), and while the keyword index commits a big import.

After every kill: the killed command's own exit (a run that finished must have succeeded),
a restart (the keyword index synced from the store, as ``serve`` does), our own comparison
of store, Tantivy and FAISS, and ``papersift doctor`` (no FAIL). At the end every
interrupted run is completed; the papers, citation counts and institutions must then equal
those of uninterrupted runs, every paper must have its vector, and no temp file is left.
"""

from __future__ import annotations

import os
import random
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.reliability_trials import (  # noqa: E402
    KINDS,
    ROR_FILE,
    Upstreams,
    enrich_settings,
    start_dask,
    upstreams,
)
from bench.reliability_trials import trial as trial_run  # noqa: E402
from papersift.core.config import Config  # noqa: E402
from papersift.engine.atomic import STALE_SECONDS  # noqa: E402
from papersift.engine.datadir import DataDir  # noqa: E402
from papersift.indexer.build import import_files  # noqa: E402
from tests.corpus import demo_records, make_config, write_jsonl  # noqa: E402
from tests.reliability_kit import (  # noqa: E402
    HARVEST,
    PAPERSIFT,
    check,
    harvest_cmd,
    kill_in_commit,
    paper_set,
    run,
)


def log(message: str) -> None:
    print(f"[reliability] {message}", file=sys.stderr, flush=True)


def _config(root: Path, up: Upstreams) -> Config:
    return make_config(root, harvest=HARVEST, enrich=enrich_settings(up.enrich),
                       embedding={"float32_cache": False})  # fmt: skip


def _complete(config_path: Path, chunks: list[Path], up: Upstreams, embed: bool) -> None:
    """Every command run to the end, uninterrupted (the reference, or the completion)."""
    cfg = ["--config", str(config_path)]
    run(harvest_cmd(config_path, up.oai))
    for chunk in chunks:
        run([*PAPERSIFT, "import", *cfg, str(chunk)])
    run([*PAPERSIFT, "import-ror", *cfg, str(ROR_FILE)])
    if embed:
        run([*PAPERSIFT, "index", *cfg], timeout=3600)
    run([*PAPERSIFT, "enrich", *cfg])


def _extras(config_path: Path) -> dict[str, Any]:
    """What the paper set does not hold: citation counts, institutions, temp files."""
    with sqlite3.connect(config_path.parent / "data" / "papers.sqlite") as db:
        cited = dict(db.execute("SELECT arxiv_id, citation_count FROM papers").fetchall())
        inst = db.execute("SELECT count(*), count(DISTINCT ror_id) FROM institutions").fetchone()
    temp = sorted(str(p.relative_to(config_path.parent)) for p in
                  (config_path.parent / "data").rglob(".*.tmp"))  # fmt: skip
    return {"cited": cited, "institutions": tuple(inst), "temp": temp}


def crash_loop(
    root: Path, trials: int, rng: random.Random, chunk_count: int = 20, chunk_size: int = 15
) -> dict[str, Any]:
    """Every kind of run killed at random, checked after each kill; then everything run to
    the end and compared with uninterrupted runs."""
    n = chunk_size
    records = demo_records()[1::7][: chunk_count * n]
    chunks = [write_jsonl(root / f"part{i}.jsonl", records[i * n : (i + 1) * n])
              for i in range(chunk_count)]  # fmt: skip
    config_path = root / "config.toml"
    survived, killed, failures, temp_seen = 0, 0, [], 0
    kinds = {k: 0 for k in KINDS}
    with upstreams() as up:
        (root / "reference").mkdir()
        _config(root / "reference", up)
        run(harvest_cmd(root / "reference" / "config.toml", up.oai))
        ref_cfg = ["--config", str(root / "reference" / "config.toml")]
        for chunk in chunks:
            run([*PAPERSIFT, "import", *ref_cfg, str(chunk)])
        targets = [(i, v[3]) for i, v in _with_doi(root / "reference" / "config.toml").items()]
        up.record_enrichment(targets)
        _complete(root / "reference" / "config.toml", [], up, embed=False)
        reference = paper_set(root / "reference" / "config.toml")
        ref_extras = _extras(root / "reference" / "config.toml")
        config = _config(root, up)
        run([*PAPERSIFT, "import", "--config", str(config_path), str(chunks[0])])
        run([*PAPERSIFT, "index", "--config", str(config_path)], timeout=1800)  # builds the model
        up.cluster = start_dask(root, config.data_dir / "models")
        for trial in range(1, trials + 1):
            kind = KINDS[(trial - 1) % len(KINDS)] if trial <= len(KINDS) else rng.choice(KINDS)
            kinds[kind] += 1
            what, problem = trial_run(kind, config_path, chunks, up, rng)
            killed += "killed" in what
            problems = ([problem] if problem else []) + check(config_path)
            temp_seen += len(_extras(config_path)["temp"])
            if problems:
                failures.append(f"trial {trial} ({what}): {'; '.join(problems)}")
            else:
                survived += 1
            log(f"crash trial {trial}/{trials}: {what}: {problems or 'OK'}")
        # Every interrupted run goes to the end; then every paper has its vector.
        _complete(config_path, chunks, up, embed=True)
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
    extras = _extras(config_path)
    if extras["cited"] != ref_extras["cited"]:
        diff = [i for i, c in ref_extras["cited"].items() if extras["cited"].get(i) != c]
        final.append(f"{len(diff)} citation counts differ from an uninterrupted enrich: {diff[:5]}")
    if extras["institutions"] != ref_extras["institutions"]:
        final.append(f"institutions {extras['institutions']}, uninterrupted "
                     f"{ref_extras['institutions']}")  # fmt: skip
    swept = _sweep(config_path, config, extras["temp"])
    if swept:
        final.append(f"temp files left behind, even once an hour old: {swept[:5]}")
    data = DataDir(config)
    embedded, count = data.store.embedded_count(data.embedder.model_id), data.store.count()
    data.close()
    if embedded != count:
        final.append(f"{count - embedded} papers without a vector")
    enriched = sum(c is not None for c in extras["cited"].values())
    return {
        "trials": trials,
        "survived": survived,
        "killed": killed,
        "kinds": kinds,
        "failures": failures,
        "temp_files_after_kills": temp_seen,
        "temp_files_at_end": len(extras["temp"]),
        "final_ok": not final,
        "ok": survived == trials and not final,
        "final_detail": "; ".join(final)
        or f"{count} papers ({len(reference)} in the uninterrupted runs), the same field for "
        f"field; {embedded} embedded; {enriched} with citation counts and "
        f"{extras['institutions'][0]} institutions, as uninterrupted",
    }


def _sweep(config_path: Path, config: Config, temp: list[str]) -> list[str]:
    """A killed writer's temp files stay until they are an hour old (a younger one may be a
    live writer's); then the next open of the data directory removes them. Ages ``temp``
    past that and opens it; returns the files still there."""
    now = time.time() - STALE_SECONDS - 60
    for name in temp:
        os.utime(config_path.parent / name, (now, now))
    DataDir(config).close()
    return _extras(config_path)["temp"]


def _reference(root: Path, files: list[Path]) -> dict[str, tuple[int, str, str]]:
    """The papers of uninterrupted imports of ``files``."""
    root.mkdir()
    data = DataDir(make_config(root))
    try:
        import_files(data, files)
    finally:
        data.close()
    return paper_set(root / "config.toml")


def _with_doi(config_path: Path) -> dict[str, tuple[int, str, str, str | None]]:
    with sqlite3.connect(config_path.parent / "data" / "papers.sqlite") as db:
        rows = db.execute("SELECT arxiv_id, version, title, abstract, doi FROM papers").fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in rows}


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
        "ok": survived == trials and not final,
        "final_detail": "; ".join(final)
        or f"{len(papers)} papers, all in Tantivy, the same as uninterrupted imports",
    }
