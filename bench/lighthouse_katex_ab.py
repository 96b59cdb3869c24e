"""A/B of math.js on the researcher page: Lighthouse mobile performance and total blocking
time with KaTeX loaded at page load (the old script) and only when TeX nears the viewport.

    .venv/bin/python bench/lighthouse_katex_ab.py CONFIG OLD_MATH_JS [--rounds 3]

CONFIG serves a data directory with the demo imported and researchers clustered
(`papersift import`, then `papersift index --limit 1`), with background embedding off
(`[schedule] embed = ""`) so it does not compete with Chromium, on `[server] port`.
OLD_MATH_JS is the old server/static/math.js (`git show a521bc3:server/static/math.js`).
Each round serves each variant in turn (order alternating) and scores Lutz Bornmann's page,
the one page type that lost points in docs/LIGHTHOUSE.md; the working copy's math.js is put
back at the end. Needs `make lighthouse`'s npm install.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
LIGHTHOUSE = ROOT / "bench" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
MATH = ROOT / "server" / "static" / "math.js"
FLAGS = "--chrome-flags=--headless=new --no-sandbox --disable-dev-shm-usage"


def score(url: str, out: Path) -> tuple[int, float, bool]:
    """Mobile performance score, total blocking time (ms), whether KaTeX was fetched."""
    subprocess.run(
        [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
         "--only-categories=performance", FLAGS],
        env={**os.environ, "CHROME_PATH": "/usr/bin/chromium"}, capture_output=True, check=True,
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    requests = report["audits"]["network-requests"]["details"]["items"]
    return (
        round(100 * report["categories"]["performance"]["score"]),
        report["audits"]["total-blocking-time"]["numericValue"],
        any("katex.min.js" in item.get("url", "") for item in requests),
    )


def serve_and_score(config: Path, port: int, out: Path) -> tuple[int, float, bool]:
    proc = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "papersift"), "serve", "--config", str(config)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(240):
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        found = httpx.get(f"{base}/api/v1/researchers", params={"q": "lutz bornmann"}).json()
        return score(found["researchers"][0]["url"], out)
    finally:
        proc.terminate()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("config", type=Path)
    ap.add_argument("old_math", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--port", type=int, default=8211)
    args = ap.parse_args()
    new_math = MATH.read_bytes()
    variants = {"eager (old)": args.old_math.read_bytes(), "lazy (new)": new_math}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                names = list(variants) if r % 2 == 0 else list(variants)[::-1]
                for name in names:
                    MATH.write_bytes(variants[name])
                    load = os.getloadavg()[0]
                    perf, tbt, katex = serve_and_score(args.config, args.port, Path(tmp) / "r.json")
                    print(f"round {r + 1} {name}: performance {perf}, TBT {tbt:.0f} ms, "
                          f"KaTeX fetched {katex}, load {load:.1f}", flush=True)  # fmt: skip
    finally:
        MATH.write_bytes(new_math)


if __name__ == "__main__":
    main()
