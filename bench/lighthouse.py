"""Lighthouse scores of every page type, mobile and desktop, written to docs/LIGHTHOUSE.md.

    .venv/bin/python bench/lighthouse.py [--url http://127.0.0.1:8000] [--runs 1]

Without ``--url`` it serves the demo corpus itself from bench/.cache/lighthouse-data (first
run: import, then it waits for the background embedding to finish, so the scores are not
taken beside it), with the ROR subset of the tests imported so institution pages exist.
Lighthouse 12.2.3 comes from npm (pinned in bench/lighthouse/package-lock.json; 13.x wants
Node 22) and drives Debian's chromium headless. A run that drops a category (a gatherer
error, now and then) is retried. Search pages score lower in SEO only because they are
``noindex``, on purpose.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))
from bench.common import model_env  # noqa: E402

HERE = ROOT / "bench" / "lighthouse"
LIGHTHOUSE = HERE / "node_modules" / ".bin" / "lighthouse"
DATA = ROOT / "bench" / ".cache" / "lighthouse-data"
ROR = ROOT / "tests" / "fixtures" / "ror" / "ror_subset_v2.jsonl.gz"
OUT = ROOT / "docs" / "LIGHTHOUSE.md"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")
CHROME = os.environ.get("CHROME_PATH", "/usr/bin/chromium")
PORT = 8197
ATTEMPTS = 4


def log(message: str) -> None:
    print(f"[load {os.getloadavg()[0]:4.1f}] {message}", file=sys.stderr, flush=True)


def ensure_lighthouse() -> None:
    if not LIGHTHOUSE.exists():
        subprocess.run(
            ["npm", "ci", "--prefix", str(HERE), "--no-audit", "--no-fund", "--loglevel=error"],
            check=True,
        )


@contextmanager
def served_demo() -> Iterator[str]:
    """``papersift serve`` over the cached demo data directory, once it has embedded all."""
    env = {**os.environ, "PAPERSIFT_DATA_DIR": str(DATA), "PAPERSIFT_SERVER_PORT": str(PORT)}
    env |= model_env(DATA)  # a cached directory keeps the model it was embedded with
    cli = str(Path(sys.executable).parent / "papersift")
    fresh = not DATA.exists()
    proc = subprocess.Popen([cli, "serve"], env=env, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{PORT}"
    try:
        deadline = time.monotonic() + 3600
        while time.monotonic() < deadline:
            try:
                stats = httpx.get(url + "/api/v1/stats", timeout=5).json()
                if stats["coverage"] >= 1 and not stats["researchers_pending"]:
                    break
                log(f"waiting for embedding: {stats['embedded']} of {stats['papers']}")
            except httpx.HTTPError:
                pass
            time.sleep(15)
        insts = httpx.get(url + "/api/v1/institutions", timeout=30).json()["institutions"]
        if fresh or not insts:  # a directory whose first run could not import them
            subprocess.run([cli, "import-ror", str(ROR)], env=env, check=True)
        yield url
    finally:
        proc.terminate()
        proc.wait(30)


def page_types(url: str) -> dict[str, str]:
    """One URL of each kind of page (the same kinds as tests/test_browser.py)."""
    with httpx.Client(base_url=url, timeout=30) as c:
        person = c.get("/api/v1/researchers", params={"q": "lutz bornmann"}).json()
        found = person["researchers"][0]["url"].removeprefix(url)
        insts = c.get("/api/v1/institutions", params={"q": "university"}).json()["institutions"]
        paper = c.get("/papers/2401.10241").headers["location"]
    pages = {
        "home": "/",
        "search": "/search?q=language+models",
        "paper": paper,
        "researcher": found,
        "researchers": "/researchers",
        "institutions": "/institutions",
        "categories": "/categories",
        "category": "/categories/cs.CL",
        "feeds": "/feeds",
        "developers": "/developers",
    }  # not the 404 page: Lighthouse refuses to score a page that is not a 200
    if insts:
        pages["institution"] = insts[0]["url"].removeprefix(url)
    return pages


def lighthouse(url: str, form: str, workdir: Path, name: str = "report") -> dict[str, int | None]:
    """Scores 0-100 per category; retried while a category comes back without a score. The
    last report stays in ``workdir`` as ``NAME-FORM.json`` (``--reports`` keeps them)."""
    scores: dict[str, int | None] = {}
    for attempt in range(1, ATTEMPTS + 1):
        out = workdir / f"{name}-{form}.json"
        cmd = [str(LIGHTHOUSE), url, "--quiet", "--output=json", f"--output-path={out}",
               f"--only-categories={','.join(CATEGORIES)}",
               "--chrome-flags=--headless=new --no-sandbox --disable-dev-shm-usage"]  # fmt: skip
        if form == "desktop":
            cmd.append("--preset=desktop")
        run = subprocess.run(cmd, env={**os.environ, "CHROME_PATH": CHROME}, capture_output=True)
        if run.returncode == 0 and out.exists():
            report: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
            cats = report.get("categories", {})
            scores = {
                c: None if cats.get(c, {}).get("score") is None else round(100 * cats[c]["score"])
                for c in CATEGORIES
            }
            if all(v is not None for v in scores.values()):
                return scores
        log(f"retrying {form} {url} (attempt {attempt}: {scores or run.returncode})")
    return scores


def cell(v: int | None) -> str:
    return "–" if v is None else str(v)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running papersift to score (default: serve the demo)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--reports", type=Path, help="keep every Lighthouse JSON report here")
    args = ap.parse_args()
    ensure_lighthouse()
    version = subprocess.run([str(LIGHTHOUSE), "--version"], capture_output=True, text=True)
    chromium = subprocess.run([CHROME, "--version"], capture_output=True, text=True)
    with served_demo() if args.url is None else _given(args.url) as url:
        pages = page_types(url)
        rows = []
        loads = []
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp) if args.reports is None else args.reports
            workdir.mkdir(parents=True, exist_ok=True)
            for name, path in pages.items():
                row = [name, f"`{path if len(path) < 40 else path[:37] + '…'}`"]
                for form in ("mobile", "desktop"):
                    loads.append(os.getloadavg()[0])
                    scores = lighthouse(url + path, form, workdir, name)
                    log(f"{form:7} {name}: {scores}")
                    row += [cell(scores.get(c)) for c in CATEGORIES]
                rows.append(row)
    now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    short = {"performance": "perf", "accessibility": "a11y", "best-practices": "bp", "seo": "SEO"}
    head = ["page", "path"] + [f"{f} {short[c]}" for f in ("mobile", "desktop") for c in CATEGORIES]
    lines = [
        "# Lighthouse scores",
        "",
        f"Measured {now} by `bench/lighthouse.py` (`make lighthouse`): Lighthouse "
        f"{version.stdout.strip()}, {chromium.stdout.strip()} headless, load average "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} cores while the runs went. "
        "Columns: performance, accessibility, best practices, SEO, for Lighthouse's mobile "
        "emulation (throttled) and its desktop preset. Search pages are `noindex` on purpose, "
        "which costs them SEO points; a missing score (–) is a category Lighthouse dropped "
        f"{ATTEMPTS} times running.",
        "",
        "| " + " | ".join(head) + " |",
        "| " + " | ".join(["---", "---"] + ["---:"] * (len(head) - 2)) + " |",
        *("| " + " | ".join(r) + " |" for r in rows),
        "",
    ]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


@contextmanager
def _given(url: str) -> Iterator[str]:
    yield url.rstrip("/")


if __name__ == "__main__":
    if shutil.which("node") is None:
        sys.exit("bench/lighthouse.py needs Node.js (20+) and npm")
    main()
