"""The kill -9 trials of the crash campaign (``bench/reliability_crash.py``): what each kind
of trial runs, and the local upstreams they read from.

Kinds: ``papersift import`` of a snapshot chunk, ``index`` (identities, then embedding in
process), ``index --cluster`` (embedding on a real ``dask scheduler`` and two ``dask worker``
processes), ``harvest`` from recorded OAI-PMH pages (half of them embedding too), a harvest
killed inside a page's keyword-index commit, ``import-ror`` of the recorded ROR subset, and
``enrich`` against recorded OpenAlex and Semantic Scholar answers. Every upstream is a
server on 127.0.0.1.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from papersift.indexer import openalex, semanticscholar  # noqa: E402
from tests.cluster_kit import Cluster, start_cluster  # noqa: E402
from tests.recorded_server import FIXTURES, RecordedServer, Reply  # noqa: E402
from tests.reliability_kit import ENV, PAPERSIFT, harvest_cmd, kill_in_commit, oai_server  # noqa: E402

KINDS = ["import", "index", "cluster", "harvest", "harvest commit", "ror", "enrich"]
ROR_FILE = FIXTURES / "ror" / "ror_subset_v2.jsonl.gz"
MAILTO = "lab@example.org"


@dataclass
class Upstreams:
    oai: str  # OAI-PMH endpoint
    recorded: RecordedServer  # OpenAlex under /oa, Semantic Scholar under /s2
    cluster: Cluster | None = None

    @property
    def enrich(self) -> str:
        return self.recorded.base

    def record_enrichment(self, papers: list[tuple[str, str | None]]) -> None:
        """A recorded OpenAlex work and Semantic Scholar paper answered for two thirds of
        ``papers`` (arXiv id, DOI) under the path the client asks; the rest are 404s."""
        work = (FIXTURES / "enrich" / "W2741809807.json").read_bytes()
        s2 = (FIXTURES / "enrich" / "s2_Paper.json").read_bytes()
        for n, (arxiv_id, doi) in enumerate(papers):
            if n % 3 == 2:
                continue
            path = "/oa" + openalex.work_path(arxiv_id, doi)
            self.recorded.add(path, {"mailto": MAILTO}, Reply(work))
            self.recorded.add("/s2" + semanticscholar.paper_path(arxiv_id, doi),
                              {"fields": semanticscholar.FIELDS}, Reply(s2))  # fmt: skip


def enrich_settings(base: str) -> dict[str, object]:
    return {"mailto": MAILTO, "openalex_url": f"{base}/oa",
            "semanticscholar_url": f"{base}/s2", "delay_seconds": 0.0}  # fmt: skip


@contextmanager
def upstreams() -> Iterator[Upstreams]:
    """The recorded OAI-PMH pages, and a server for recorded enrichment answers."""
    server = RecordedServer()
    with ExitStack() as stack:
        url = stack.enter_context(oai_server())
        server.start()
        stack.callback(server.stop)
        up = Upstreams(oai=url, recorded=server)
        try:
            yield up
        finally:
            if up.cluster is not None:
                up.cluster.stop()


def start_dask(root: Path, models: Path) -> Cluster:
    """A scheduler and two workers reading the model the crash directory built."""
    return start_cluster(root / "cluster", models)


def kill_at(cmd: list[str], delay: float) -> tuple[bool, str]:
    """Start ``cmd`` and SIGKILL it after ``delay`` s; (finished first, a problem if it
    finished badly: a non-zero exit or a traceback)."""
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        _, err = proc.communicate(timeout=delay)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate()
        return False, ""
    text = err.decode("utf-8", "replace")
    if proc.returncode != 0 or "Traceback" in text:
        return True, f"exit {proc.returncode}: {text.strip()[-300:]}"
    return True, ""


def trial(
    kind: str, config_path: Path, chunks: list[Path], up: Upstreams, rng: random.Random
) -> tuple[str, str]:
    """Run one command of ``kind`` and kill it: (what happened, a problem or '')."""
    cfg = ["--config", str(config_path)]
    if kind == "import":
        delay = rng.uniform(0.4, 3.0)
        cmd = [*PAPERSIFT, "import", *cfg, str(rng.choice(chunks))]
    elif kind == "index":  # identities, model load, then embedding checkpoints
        delay = rng.uniform(1.0, 12.0)
        cmd = [*PAPERSIFT, "index", *cfg]
    elif kind == "cluster":
        assert up.cluster is not None
        delay = rng.uniform(1.0, 12.0)
        cmd = [*PAPERSIFT, "index", *cfg, "--cluster", up.cluster.address]
    elif kind == "harvest":  # three pages 0.2 s apart, then (half the time) embedding
        embed, updates = rng.random() < 0.5, rng.random() < 0.3
        delay = rng.uniform(0.8, 8.0 if embed else 3.0)
        cmd = harvest_cmd(config_path, up.oai, embed=embed, updates=updates)
        kind = f"harvest{' of updates' if updates else ''}{' + embed' if embed else ''}"
    elif kind == "ror":
        delay = rng.uniform(0.5, 4.0)
        cmd = [*PAPERSIFT, "import-ror", *cfg, str(ROR_FILE)]
    elif kind == "enrich":
        delay = rng.uniform(0.8, 8.0)
        cmd = [*PAPERSIFT, "enrich", *cfg]
    else:  # kill while one of the per-page keyword-index commits writes its segment
        updates = rng.random() < 0.3
        nth = 1 if updates else rng.randint(1, 3)
        lexical = config_path.parent / "data" / "lexical"
        cmd = harvest_cmd(config_path, up.oai, updates=updates)
        outcome = kill_in_commit(cmd, lexical, rng, nth)
        return f"harvest{' of updates' if updates else ''}, commit {nth}: {outcome}", ""
    finished, problem = kill_at(cmd, delay)
    return f"{kind} {'finished' if finished else f'killed after {delay:.1f}s'}", problem
