"""Issue-24 campaigns of ``bench/reliability.py``: hostile records in every input format, and
concurrent writers, through the real CLI and server processes.

Hostile records: poisoned snapshot lines (lone surrogates in each text field, huge versions,
a 5,000-digit version, markdown and HTML injections) are imported with ``papersift import``
and an OAI-PMH arXivRaw page with a huge version is harvested with ``papersift harvest``
from a local recorded server; the good records must land, the bad ones be reported, and a
rerun go on. Then ``papersift serve`` over the result answers the integer routes with
5,000-digit numbers (400, never 5xx) and renders the hostile papers' pages and markdown.

Concurrent writers: rounds of two writing commands started at once (import + reindex,
harvest + import, index + import); each must either finish or refuse in one line naming
the writer that holds the lock, never print a traceback, and the data directory must pass
the consistency check and ``papersift doctor`` afterwards.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.reliability_formats import formats_campaign, page_problem  # noqa: E402
from tests.corpus import demo_records, make_config, write_jsonl  # noqa: E402
from tests.load_kit import serve  # noqa: E402
from tests.recorded_server import FIXTURES, RecordedServer, Reply  # noqa: E402
from tests.reliability_kit import ENV, PAPERSIFT, check, harvest_cmd, oai_server  # noqa: E402

NINES = "9" * 5000
INTEGER_ROUTES = [
    f"/api/v1/researchers?page={NINES}", f"/api/v1/researchers?limit={NINES}",
    f"/researchers?page={NINES}", f"/api/v1/institutions?page={NINES}",
    f"/api/v1/institutions?limit={NINES}", f"/institutions?page={NINES}",
    f"/sitemaps/papers-{NINES}.xml", f"/papers/2401.10241v{NINES}",
    f"/abs/2401.10241v{NINES}", f"/api/v1/papers/2401.10241v{NINES}",
    f"/search?q=x&page={NINES}",
]  # fmt: skip


def _poisoned(n_good: int, rng: random.Random) -> tuple[list[dict[str, Any]], int]:
    """Good demo records with poisoned ones among them; (records, how many must be skipped)."""
    records = copy.deepcopy(demo_records()[:n_good])
    skipped = 0
    for i, r in enumerate(records):
        kind = rng.randrange(8)
        if kind == 0:
            r[rng.choice(["title", "abstract", "comments", "authors"])] = "x \ud800 y"
        elif kind == 1:
            r["id"] = f"{r['id']}v{rng.choice(['99999999999999999999', NINES, '0'])}"
            skipped += 1
        elif kind == 2:
            r["versions"] = [*r.get("versions", []), {"version": "v9223372036854775807"}]
            skipped += 1
        elif kind == 3:
            r["title"] = f"x](javascript:alert({i})) [y <img src=x onerror=alert({i})>"
    return records, skipped


def _cli(cmd: list[str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)


def hostile_campaign(root: Path, rounds: int, rng: random.Random) -> dict[str, Any]:
    """Poisoned imports and an arXivRaw harvest, then the server over the result."""
    failures: list[str] = []
    config_path = root / "config.toml"
    make_config(root, embedding={"float32_cache": False, "max_length": 64},
                harvest={"metadata_prefix": "arXivRaw", "delay_seconds": 0,
                         "retries": 0})  # fmt: skip
    imported = skipped_total = 0
    for n in range(rounds):
        records, must_skip = _poisoned(60, rng)
        path = write_jsonl(root / f"poisoned-{n}.jsonl", records)
        for attempt in ("first", "rerun"):
            r = _cli([*PAPERSIFT, "import", "--config", str(config_path), "--json", str(path)])
            if r.returncode != 0 or "Traceback" in r.stderr:
                failures.append(f"import {n} {attempt}: exit {r.returncode}: {r.stderr[-300:]}")
                continue
            out = json.loads(r.stdout)
            # Every skip has a reason; those out of bounds also name the field (a float-mangled
            # id such as "1004.339" with a version suffix is just an invalid id).
            fields = all(s["field"] or "invalid id" in s["reason"] for s in out["skipped"])
            if len(out["skipped"]) != must_skip or not fields:
                failures.append(f"import {n} {attempt}: skipped {out['skipped'][:3]}")
            if attempt == "first":
                imported += out["added"] + out["updated"]
                skipped_total += len(out["skipped"])
    harvested = _harvest_poisoned(config_path, failures)
    served = _serve_checks(config_path, failures)
    (root / "formats").mkdir()
    formats = formats_campaign(root / "formats", rng)
    failures += formats["failures"]
    return {"rounds": rounds, "imported": imported, "skipped": skipped_total,
            "harvested": harvested, "requests": served, "formats": formats["figures"],
            "failures": failures, "ok": not failures}  # fmt: skip


def _harvest_poisoned(config_path: Path, failures: list[str]) -> int:
    body = (FIXTURES / "oai" / "ListRecordsResponse.xml").read_bytes()
    body = body.replace(b'<version version="v4">', b'<version version="v99999999999999999999">')
    start, end = body.index(b"<resumptionToken"), body.index(b"</resumptionToken>") + 18
    server = RecordedServer()
    server.add("/oai2", {"verb": "ListRecords", "metadataPrefix": "arXivRaw",
                         "from": "2014-10-01"}, Reply(body[:start] + body[end:]))  # fmt: skip
    server.start()
    try:
        r = _cli([*PAPERSIFT, "harvest", "--config", str(config_path), "--json", "--no-embed",
                  "--url", server.url("/oai2"), "--from", "2014-10-01"])  # fmt: skip
    finally:
        server.stop()
    if r.returncode != 0 or "Traceback" in r.stderr:
        failures.append(f"arXivRaw harvest: exit {r.returncode}: {r.stderr[-300:]}")
        return 0
    out = json.loads(r.stdout)
    if out.get("skipped") != 1 or out["added"] + out["updated"] + out["unchanged"] != 5:
        failures.append(f"arXivRaw harvest: {out}")
    return int(out["added"]) + int(out["updated"])


def _serve_checks(config_path: Path, failures: list[str]) -> int:
    requests = 0
    with (
        serve(config_path, config_path.parent / "serve.log") as url,
        httpx.Client(base_url=url, timeout=60) as http,
    ):
        for route in INTEGER_ROUTES:
            r = http.get(route)
            requests += 1
            if r.status_code >= 500 or r.status_code not in (400, 404):
                failures.append(f"{route[:60]}: HTTP {r.status_code}")
        found = http.get("/api/v1/search", params={"q": "javascript", "page_size": 50}).json()
        for hit in found.get("hits", []):
            pid = hit["paper"]["id"]
            for path, headers in ((f"/papers/{pid}", {}), (f"/papers/{pid}.md", {}),
                                  (f"/papers/{pid}", {"Accept": "text/markdown"})):  # fmt: skip
                requests += 1
                problem = page_problem(http, path, headers)
                if problem:
                    failures.append(problem)
    return requests


def writers_campaign(root: Path, rounds: int) -> dict[str, Any]:
    """Two writing commands at once, ``rounds`` times; every outcome is a finish or a
    one-line refusal, and the data directory is consistent afterwards."""
    failures: list[str] = []
    config_path = root / "config.toml"
    with oai_server() as url:
        make_config(root, embedding={"float32_cache": False, "max_length": 64},
                    harvest={"url": url, "metadata_prefix": "arXiv", "delay_seconds": 0,
                             "retries": 0})  # fmt: skip
        files = [write_jsonl(root / f"part-{i}.jsonl", demo_records()[i * 150 : (i + 1) * 150])
                 for i in range(4)]  # fmt: skip
        base = ["--config", str(config_path)]
        _cli([*PAPERSIFT, "import", *base, str(files[3])])  # the rounds start from an index
        pairs = [
            ([*PAPERSIFT, "import", *base, str(files[0])], [*PAPERSIFT, "reindex", *base]),
            (harvest_cmd(config_path, url), [*PAPERSIFT, "import", *base, str(files[1])]),
            ([*PAPERSIFT, "index", *base], [*PAPERSIFT, "import", *base, str(files[2])]),
        ]
        finished = refused = 0
        for n in range(rounds):
            first, second = pairs[n % len(pairs)]
            procs = [
                subprocess.Popen(
                    c, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
                )
                for c in (first, second)
            ]
            for cmd, proc in zip((first, second), procs, strict=True):
                _, err = proc.communicate(timeout=900)
                if "Traceback" in err:
                    failures.append(f"round {n} {cmd[3]}: traceback: {err[-300:]}")
                elif proc.returncode == 0:
                    finished += 1
                elif "is writing to" in err and err.strip().count("\n") == 0:
                    refused += 1
                else:
                    failures.append(f"round {n} {cmd[3]}: exit {proc.returncode}: {err[-200:]}")
        problems = check(config_path)
        failures += [f"after the rounds: {p}" for p in problems]
    return {"rounds": rounds, "finished": finished, "refused": refused, "failures": failures,
            "ok": not failures}  # fmt: skip
