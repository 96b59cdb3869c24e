"""Hostile records in the input formats ``reliability_hostile`` does not cover, through the
real CLI against recorded upstream responses on 127.0.0.1: OAI-PMH ``arXiv`` pages, arXiv
API Atom feeds (``papersift add``), OpenAlex and Semantic Scholar answers (``papersift
enrich``) and ROR records (``papersift import-ror``).

Each poisoned input holds good records beside bad ones (lone surrogates in JSON, huge and
negative integers, 12,000-author lists, megabyte names, impossible dates, HTML, markdown
and ``javascript:`` links). Every command must exit 0 with no traceback, land the good
records and leave a consistent data directory; a rerun must go on the same way.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from papersift.indexer import openalex, semanticscholar  # noqa: E402
from tests.corpus import demo_records, make_config, write_jsonl  # noqa: E402
from tests.load_kit import serve  # noqa: E402
from tests.recorded_server import FIXTURES, RecordedServer, Reply  # noqa: E402
from tests.reliability_kit import ENV, PAPERSIFT, check  # noqa: E402
from tests.test_hostile import _assert_clean_html, _assert_clean_markdown  # noqa: E402

OAI = "http://www.openarchives.org/OAI/2.0/"
ARXIV = "http://arxiv.org/OAI/arXiv/"
ATOM = "http://www.w3.org/2005/Atom"
INJECT = "x](javascript:alert(1)) [y <img src=x onerror=alert(1)><script>alert(2)</script>"
HUGE = 10**30
MAILTO = "lab@example.org"


class AnyServer(RecordedServer):
    """A recorded server that answers ``fallback`` to a request it has no route for."""

    def __init__(self, fallback: Reply) -> None:
        super().__init__()
        self.fallback = fallback

    def _reply(self, path: str, params: dict[str, str], agent: str) -> Reply:
        reply = super()._reply(path, params, agent)
        return self.fallback if reply.status == 404 and path != "/404" else reply


def page_problem(http: httpx.Client, path: str, headers: dict[str, str]) -> str:
    """What is wrong with one page of hostile papers ("" for nothing): the checks of
    tests/test_hostile.py, parsed or rendered, nothing live."""
    r = http.get(path, headers=headers, follow_redirects=True)
    try:
        assert r.status_code == 200, f"HTTP {r.status_code}"
        if r.headers["content-type"].startswith("text/html"):
            _assert_clean_html(r.text)
        else:
            _assert_clean_markdown(r.text)
    except AssertionError as exc:
        return f"{path} {headers}: {str(exc)[:200]}"
    return ""


def _cli(args: list[str], config: Path, timeout: float = 900) -> tuple[dict[str, Any], str]:
    """``papersift ARGS --config CONFIG --json``: (its report, a problem or '')."""
    cmd = [*PAPERSIFT, *args[:1], "--config", str(config), "--json", *args[1:]]
    r = subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0 or "Traceback" in r.stderr:
        return {}, f"{args[0]}: exit {r.returncode}: {r.stderr.strip()[-400:]}"
    try:
        return json.loads(r.stdout), ""
    except json.JSONDecodeError:
        return {}, f"{args[0]}: not JSON: {r.stdout[-200:]}"


def oai_arxiv_page() -> bytes:
    """The first recorded hepcrawl page (``arXiv`` format), one page only, poisoned."""
    root = etree.fromstring((FIXTURES / "oai" / "hepcrawl-page1.xml").read_bytes())
    for token in root.iter(f"{{{OAI}}}resumptionToken"):
        token.getparent().remove(token)
    records = [r.find(f".//{{{ARXIV}}}arXiv") for r in root.iter(f"{{{OAI}}}record")]
    meta = [m for m in records if m is not None]

    def field(m: etree._Element, tag: str) -> etree._Element:
        return m.find(f"{{{ARXIV}}}{tag}")  # type: ignore[return-value]

    authors = field(meta[0], "authors")
    for i in range(12_000):
        a = etree.SubElement(authors, f"{{{ARXIV}}}author")
        etree.SubElement(a, f"{{{ARXIV}}}keyname").text = f"K{i}"
        etree.SubElement(a, f"{{{ARXIV}}}forenames").text = f"F{i}"
    field(meta[1], "title").text = INJECT + " \u202e " + "T" * 300_000
    field(meta[0], "created").text = "99999-99-99"
    field(meta[1], "abstract").text = "<script>alert(3)</script> " * 5000
    return etree.tostring(root, xml_declaration=True, encoding="utf-8")


def arxiv_api_feed() -> tuple[bytes, list[str]]:
    """A recorded arXiv API answer with hostile entries among the good ones; (the feed, the
    ids to ask for: all but the two entries that must be skipped)."""
    rec = json.loads((FIXTURES / "arxiv_api" / "q_testing_s0_m10.json").read_text("utf-8"))
    root = etree.fromstring(rec["body"].encode("utf-8"))
    entries = root.findall(f"{{{ATOM}}}entry")
    entries[0].find(f"{{{ATOM}}}id").text += "9999999999999999999999"  # type: ignore[operator,union-attr]
    entries[1].find(f"{{{ATOM}}}title").text = INJECT  # type: ignore[union-attr]
    entries[2].find(f"{{{ATOM}}}published").text = "0000-13-45T99:99:99Z"  # type: ignore[union-attr]
    entries[3].find(f"{{{ATOM}}}summary").text = "A" * 2_000_000  # type: ignore[union-attr]
    ids = [e.findtext(f"{{{ATOM}}}id") or "" for e in entries]
    ask = [i.split("/abs/")[-1].rsplit("v", 1)[0] for n, i in enumerate(ids) if n not in (0, 2)]
    return etree.tostring(root, xml_declaration=True, encoding="utf-8"), ask


def openalex_work(n: int) -> bytes:
    """The recorded OpenAlex work, poisoned according to ``n``."""
    work = json.loads((FIXTURES / "enrich" / "W2741809807.json").read_text("utf-8"))
    w = copy.deepcopy(work)
    kind = n % 6
    if kind == 0:
        w["cited_by_count"] = HUGE
    elif kind == 1:
        w["cited_by_count"] = -5
    elif kind == 2:
        a = w["authorships"][0]
        w["authorships"] = [copy.deepcopy(a) for _ in range(12_000)]
    elif kind == 3:
        for a in w["authorships"]:
            a["raw_author_name"] = "Name \ud800 " + INJECT
            for inst in a.get("institutions") or []:
                inst["display_name"] = INJECT
                inst["ror"] = "https://ror.org/" + "9" * 5000
    elif kind == 4:
        w["referenced_works"] = [f"https://openalex.org/W{i}" for i in range(200_000)]
        w["doi"] = "https://doi.org/10.1/" + "x" * 100_000
    return json.dumps(w).encode("utf-8")  # kind 5: the recorded work as it is


def s2_paper(n: int) -> bytes:
    """The recorded Semantic Scholar paper, poisoned according to ``n``."""
    paper = json.loads((FIXTURES / "enrich" / "s2_Paper.json").read_text("utf-8"))
    p = copy.deepcopy(paper)
    kind = n % 5
    if kind == 0:
        p["citationCount"] = HUGE
    elif kind == 1:
        p["citationCount"] = "lots"
        p["externalIds"] = {"ArXiv": "9" * 5000, "DOI": INJECT}
    elif kind == 2:
        p["authors"] = [{"name": f"A{i} \ud800", "authorId": str(i)} for i in range(12_000)]
    elif kind == 3:
        p["citations"] = [{"externalIds": {"ArXiv": f"2401.{i:05d}"}} for i in range(100_000)]
    return json.dumps(p).encode("utf-8")


def ror_file(root: Path) -> tuple[Path, int]:
    """The recorded ROR subset with hostile records mixed in; (file, good records)."""
    with gzip.open(FIXTURES / "ror" / "ror_subset_v2.jsonl.gz", "rt", encoding="utf-8") as fh:
        good = [json.loads(line) for line in fh][:200]
    bad: list[dict[str, Any]] = []
    for i, base in enumerate(good[:12]):
        r = copy.deepcopy(base)
        r["id"] = f"https://ror.org/0bad{i:05d}"[:25]
        kind = i % 6
        if kind == 0:
            r["names"] = [{"lang": None, "types": ["ror_display", "label"],
                           "value": "Inst \ud800 " + INJECT}]  # fmt: skip
        elif kind == 1:
            r["names"] = [{"lang": None, "types": ["ror_display"], "value": "N" * 1_000_000}]
        elif kind == 2:
            r["established"] = HUGE
        elif kind == 3:
            r["names"] = [*r["names"], *({"lang": None, "types": ["alias"], "value": f"a{j}"}
                                         for j in range(50_000))]  # fmt: skip
        elif kind == 4:
            r["id"] = "https://ror.org/" + "9" * 5000
        else:
            r["links"] = [{"type": "website", "value": "javascript:alert(1)"}]
            r["locations"] = [{"geonames_details": {"lat": "x", "lng": HUGE}}]
        bad.append(r)
    path = root / "ror-hostile.jsonl"
    lines = [json.dumps(r) for r in [*good, *bad]]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, len(good)


def formats_campaign(root: Path, rng: random.Random) -> dict[str, Any]:
    """Every format in turn into a data directory holding some good demo papers, each run
    twice; then the consistency check and ``papersift doctor``, and the server's pages for
    what landed (no live script, handler or ``javascript:`` link)."""
    failures: list[str] = []
    figures: dict[str, Any] = {}
    records = demo_records()[3::97][:30]
    papers = [r["id"] for r in records]
    oai = RecordedServer()
    oai.add("/oai2", {"verb": "ListRecords", "metadataPrefix": "arXiv", "from": "2016-01-01"},
            Reply(oai_arxiv_page()))  # fmt: skip
    feed, ask = arxiv_api_feed()
    api = AnyServer(Reply(feed, 200, {"Content-Type": "application/atom+xml"}))
    enrich = RecordedServer()
    for n, pid in enumerate(papers):
        enrich.add("/oa" + openalex.work_path(pid, None), {"mailto": MAILTO},
                   Reply(openalex_work(n)))  # fmt: skip
        enrich.add("/s2" + semanticscholar.paper_path(pid, None),
                   {"fields": semanticscholar.FIELDS}, Reply(s2_paper(n)))  # fmt: skip
    for server in (oai, api, enrich):
        server.start()
    config = root / "config.toml"
    make_config(root, embedding={"float32_cache": False, "max_length": 64},
                harvest={"api_url": api.url("/api/query"), "metadata_prefix": "arXiv",
                         "delay_seconds": 0, "retries": 0},
                enrich={"mailto": MAILTO, "openalex_url": enrich.url("/oa"),
                        "semanticscholar_url": enrich.url("/s2"), "delay_seconds": 0.0},
                )  # fmt: skip
    try:
        _, problem = _cli(["import", str(write_jsonl(root / "good.jsonl", records))], config)
        failures += [problem] if problem else []
        ror, good_ror = ror_file(root)
        figures["ror_good"] = good_ror
        for attempt in ("first", "rerun"):
            steps: list[tuple[str, list[str]]] = [
                (
                    "oai-arXiv",
                    ["harvest", "--no-embed", "--url", oai.url("/oai2"), "--from", "2016-01-01"],
                ),
                ("arxiv-api", ["add", "--no-embed", *ask]),
                ("openalex+s2", ["enrich"]),
                ("ror", ["import-ror", str(ror)]),
            ]
            for name, args in steps:
                out, problem = _cli(args, config)
                if problem:
                    failures.append(f"{name} {attempt}: {problem}")
                elif attempt == "first":
                    figures[name] = {k: v for k, v in out.items() if isinstance(v, int | str)}
                    skipped = out.get("skipped") or []
                    figures[name]["skipped"] = skipped if isinstance(skipped, int) else len(skipped)
    finally:
        for server in (oai, api, enrich):
            server.stop()
    failures += [f"after the formats: {p}" for p in check(config)]
    figures["requests"] = len(oai.requests) + len(api.requests) + len(enrich.requests)
    figures["pages"] = _pages(config, failures)
    return {"figures": figures, "failures": failures}


def _pages(config: Path, failures: list[str]) -> int:
    """Every paper, researcher and institution page the hostile data reaches, as HTML and
    markdown: 200 and nothing live."""
    done = 0
    with (
        serve(config, config.parent / "serve.log") as url,
        httpx.Client(base_url=url, timeout=120) as http,
    ):
        paths = []
        for api, key in (("/api/v1/researchers", "researchers"),
                         ("/api/v1/institutions", "institutions")):  # fmt: skip
            listing = http.get(api, params={"limit": 50}).json()
            paths += [item["url"] for item in listing.get(key, []) if item.get("url")]
        found = http.get("/api/v1/search", params={"q": "javascript alert", "page_size": 50})
        paths += [f"/papers/{h['paper']['id']}" for h in found.json().get("hits", [])]
        for path in paths:
            for headers in ({}, {"Accept": "text/markdown"}):
                done += 1
                problem = page_problem(http, path, headers)
                if problem:
                    failures.append(problem)
    log_text = (config.parent / "serve.log").read_text(errors="replace")
    if "Traceback" in log_text:
        failures.append(f"server traceback: {log_text[log_text.index('Traceback') :][:400]}")
    return done
