"""Shared by the crash-recovery tests and ``bench/reliability.py``: run ``papersift``
subprocesses, kill them with SIGKILL (at a random moment or while the keyword index commits),
then check that store, keyword index and vectors still agree.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from papersift.core.config_load import load_config
from papersift.engine.datadir import DataDir
from tests.recorded_server import RecordedServer, oai

ROOT = Path(__file__).resolve().parent.parent
PAPERSIFT = [sys.executable, "-m", "papersift"]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# The recorded hepcrawl list (12 real arXiv records in three pages), harvested as one window.
WINDOW = "2016-01-01"
HARVEST = {"metadata_prefix": "arXiv", "delay_seconds": 0.2, "retries": 0}
_LIST = {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": WINDOW}
# A second window changes the title and abstract of 2 of them (one page): harvesting the two
# windows in turn keeps producing real changes to commit.
UPDATES = ("2016-03-01", "2016-03-31")
_PAGES = [
    (_LIST, "hepcrawl-page1.xml"),
    ({"verb": "ListRecords", "resumptionToken": "hepcrawl|4"}, "hepcrawl-page2.xml"),
    ({"verb": "ListRecords", "resumptionToken": "hepcrawl|8"}, "hepcrawl-page3.xml"),
    (
        {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": UPDATES[0], "until": UPDATES[1]},
        "hepcrawl-updates.xml",
    ),
]
# Tantivy writes a segment's files only when it commits (our batches fit its memory budget).
SEGMENT_FILE = (".idx", ".pos", ".store", ".term", ".fast", ".fieldnorm")


@contextmanager
def oai_server() -> Iterator[str]:
    """A local OAI-PMH endpoint replaying the recorded hepcrawl pages; yields its URL."""
    server = RecordedServer()
    for params, name in _PAGES:
        server.add("/oai2", params, oai(name))
    server.start()
    try:
        yield server.url("/oai2")
    finally:
        server.stop()


def harvest_cmd(
    config_path: Path, url: str, *, embed: bool = False, updates: bool = False
) -> list[str]:
    """``papersift harvest`` of the recorded list (or, with ``updates``, of its updates)."""
    cmd = [*PAPERSIFT, "harvest", "--config", str(config_path), "--url", url]
    cmd += ["--from", UPDATES[0], "--until", UPDATES[1]] if updates else ["--from", WINDOW]
    return [*cmd, "--json"] if embed else [*cmd, "--no-embed", "--json"]


def run(cmd: list[str], timeout: float = 600) -> None:
    """Run a papersift command to the end; raise with its stderr if it fails."""
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[2:4])} failed: {r.stderr.strip()[-500:]}")


def _segment_files(folder: Path) -> set[str]:
    try:
        return {p.name for p in folder.iterdir() if p.name.endswith(SEGMENT_FILE)}
    except FileNotFoundError:
        return set()


def kill_at(cmd: list[str], delay: float) -> bool:
    """Start ``cmd`` and SIGKILL it after ``delay`` seconds; True if it finished first."""
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=delay)
        return True
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


def kill_in_commit(
    cmd: list[str], lexical: Path, rng: random.Random, nth: int = 1, timeout: float = 300
) -> str:
    """Start ``cmd`` and SIGKILL it while its ``nth`` keyword-index commit is writing files
    (the first new segment file in ``lexical``, plus 0-30 ms); returns what happened."""
    before = _segment_files(lexical)
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timeout
    seen = 0
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            new = _segment_files(lexical) - before
            if new:
                seen += 1
                before |= new
                if seen >= nth:
                    time.sleep(rng.uniform(0, 0.03))
                    if proc.poll() is None:
                        os.kill(proc.pid, signal.SIGKILL)
                        proc.wait()
                        return "killed in commit"
            time.sleep(0.002)
        return "finished first"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def consistency(config_path: Path) -> list[str]:
    """Restart as ``serve`` does (sync the keyword index from the store), then compare the
    store with both indexes; the problems found."""
    data = DataDir(load_config(config_path, env={}), create=True)
    try:
        data.sync_lexical()
        problems = []
        data.lexical.reload()
        everything = data.lexical.index.parse_query("*")
        docs, _, _ = data.lexical.search(everything, max(1, data.lexical.num_docs))
        with data.store.reading() as db:
            dup = db.execute(
                "SELECT count(*) FROM (SELECT arxiv_id FROM papers GROUP BY arxiv_id "
                "HAVING count(*) > 1)"
            ).fetchone()[0]
            docids = {r[0] for r in db.execute("SELECT docid FROM papers")}
        if dup:
            problems.append(f"{dup} arXiv ids stored twice")
        if len(docs) != len(set(docs)):
            problems.append(f"{len(docs) - len(set(docs))} documents twice in Tantivy")
        if set(docs) != docids:
            problems.append(
                f"store has {len(docids)} papers, Tantivy {len(set(docs))} documents "
                f"({len(docids - set(docs))} missing, {len(set(docs) - docids)} stray)"
            )
        import faiss  # the ids held by the FAISS id map (no public accessor: a check only)

        held = faiss.vector_to_array(data.vectors._index.id_map).tolist()
        stray = [d for d in held if d not in docids]
        if stray:
            problems.append(f"{len(stray)} vectors of papers not in the store")
        return problems
    finally:
        data.close()


def doctor(config_path: Path) -> tuple[bool, str]:
    """``papersift doctor``: (no FAIL, the FAIL lines)."""
    r = subprocess.run(
        [*PAPERSIFT, "doctor", "--config", str(config_path), "--json"],
        env=ENV,
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


def check(config_path: Path) -> list[str]:
    """Both checks after a kill: the restart comparison, then ``papersift doctor``."""
    problems = consistency(config_path)
    ok, detail = doctor(config_path)
    return problems if ok else [*problems, f"doctor: {detail}"]


def paper_set(config_path: Path) -> dict[str, tuple[int, str, str]]:
    """Every stored paper: arXiv id -> (version, title, abstract)."""
    data = DataDir(load_config(config_path, env={}), create=False)
    try:
        with data.store.reading() as db:
            rows = db.execute("SELECT arxiv_id, version, title, abstract FROM papers").fetchall()
        return {r[0]: (r[1], r[2], r[3]) for r in rows}
    finally:
        data.close()
