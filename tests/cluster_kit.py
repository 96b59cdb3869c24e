"""A real Dask cluster for tests and benchmarks: ``dask scheduler`` and ``dask worker``
processes on 127.0.0.1, talking TCP (not an in-process cluster)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

DASK = str(Path(sys.executable).with_name("dask"))


@dataclass
class Cluster:
    address: str
    scheduler: subprocess.Popen[bytes]
    workers: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def stop(self) -> None:
        for p in [*self.workers, self.scheduler]:
            if p.poll() is None:
                p.terminate()
        for p in [*self.workers, self.scheduler]:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def start_cluster(tmp: Path, model_cache: Path, workers: int = 2) -> Cluster:
    """``dask scheduler`` plus ``workers`` × ``dask worker --nthreads 1`` (no nanny, so a
    killed worker stays dead), each its own process, talking TCP on 127.0.0.1."""
    tmp.mkdir(parents=True, exist_ok=True)
    info = tmp / "scheduler.json"
    env = {**os.environ, "PAPERSIFT_MODEL_CACHE": str(model_cache), "OMP_NUM_THREADS": "1"}
    log = open(tmp / "cluster.log", "ab")  # noqa: SIM115 - kept open for the processes
    scheduler = subprocess.Popen(
        [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(info)],
        stdout=log, stderr=log, env=env,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not info.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    cluster = Cluster(json.loads(info.read_text())["address"], scheduler)
    for i in range(workers):
        cluster.workers.append(subprocess.Popen(
            [DASK, "worker", cluster.address, "--nthreads", "1", "--no-nanny",
             "--no-dashboard", "--host", "127.0.0.1", "--name", f"w{i}"],
            stdout=log, stderr=log, env=env,
        ))  # fmt: skip
    from distributed import Client

    with Client(cluster.address, timeout=30) as client:
        client.wait_for_workers(workers, timeout=60)
    assert cluster.address.startswith("tcp://127.0.0.1:")
    return cluster
