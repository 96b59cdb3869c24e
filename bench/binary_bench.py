"""Size and start times of the one-file executable ``dist/papersift``, run as on a bare machine.

Builds it if stale with ``packaging/build_binary.py`` (what ``make binary`` runs; ``--force``
rebuilds from scratch, which is what a fresh CI machine pays), copies it out of the
repository and, under ``env -i`` with PATH=/usr/bin:/bin, times: ``--version`` (unpacking
plus interpreter start), the first ``serve`` on an empty data directory (imports the bundled
demo corpus) until ``/healthz`` answers, and restarts on that directory. Prints a table.

    .venv/bin/python bench/binary_bench.py [--force] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import ROOT, load_average, log, table


def _clean_run() -> Any:
    # By path: the folder name `packaging` belongs to the installed distribution of that name.
    spec = spec_from_file_location("papersift_clean_run", ROOT / "packaging" / "clean_run.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def build(force: bool) -> dict[str, Any]:
    cmd = [sys.executable, str(ROOT / "packaging" / "build_binary.py"), "--json"]
    out = subprocess.run([*cmd, "--force"] if force else cmd, check=True, capture_output=True)
    result: dict[str, Any] = json.loads(out.stdout.decode().strip().splitlines()[-1])
    return result


def version_seconds(clean_run: Any, binary: Path, home: Path) -> float:
    start = time.monotonic()
    cmd = clean_run.clean_command(binary, home, "--version")
    subprocess.run(cmd, check=True, cwd=home, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="time a build from scratch")
    parser.add_argument("--repeat", type=int, default=3, help="runs of --version and restart")
    args = parser.parse_args()
    clean_run = _clean_run()
    log("building dist/papersift (skipped if the stamp is current)")
    stamp = build(args.force)
    with tempfile.TemporaryDirectory(prefix="papersift-binary-bench-") as tmp:
        home = Path(tmp)
        binary = home / "papersift"
        shutil.copy2(ROOT / "dist" / "papersift", binary)
        log("--version")
        versions = [version_seconds(clean_run, binary, home) for _ in range(args.repeat)]
        log("first start: imports the demo corpus")
        with clean_run.serving(binary, home) as server:
            first = server.started_seconds
            papers = server.json("/healthz")["papers"]
        restarts = []
        for i in range(args.repeat):
            log(f"restart {i + 1}")
            with clean_run.serving(binary, home) as server:
                restarts.append(server.started_seconds)
    build_note = "this run" if stamp["built"] else "last build, from the stamp"
    if args.force:
        build_note += ", from scratch"
    rows = [
        ["binary size", f"{stamp['bytes'] / 2**20:.1f} MiB", "dist/papersift"],
        ["build", f"{stamp['build_seconds']:.0f} s", build_note],
        ["`--version`", f"{statistics.median(versions):.1f} s", f"median of {len(versions)}"],
        ["first `serve` to /healthz", f"{first:.1f} s", f"imports the demo ({papers} papers)"],
        [
            "restart to /healthz",
            f"{statistics.median(restarts):.1f} s",
            f"median of {len(restarts)}",
        ],
    ]
    print(table(["what", "measured", "note"], rows))
    print(f"\nload average during the run: {load_average()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
