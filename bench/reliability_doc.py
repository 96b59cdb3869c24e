"""Writes docs/RELIABILITY.md from the campaign results ``bench/reliability.py`` keeps (one
JSON file per campaign: its result, command, date, duration and load average)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "RELIABILITY.md"
TEMPLATE = Path(__file__).with_name("reliability_doc.md")
ORDER = ("fuzz", "crash", "commit", "load", "hostile", "writers", "signin", "props")
NAMES = {
    "fuzz": "API fuzzing (schemathesis 4, stateless and stateful)",
    "crash": "kill -9 during import, embedding, cluster embedding, harvest, ROR import, enrich",
    "commit": "kill -9 while Tantivy commits a big import",
    "load": "searches while writing and during `reindex`",
    "hostile": "hostile records in every input format",
    "writers": "concurrent writers",
    "signin": "sign-in, sign-up and sessions under hostile traffic",
    "props": "property tests (Hypothesis)",
}


def _one_line(text: str, limit: int = 420) -> str:
    """A failure message on one line, cut at ``limit`` characters (a repeated character,
    such as a generated value, is shown once with its count)."""
    text = re.sub(r"(.)\1{20,}", lambda m: f"{m.group(1)}×{len(m.group(0))}", text)
    text = "".join(c if c.isprintable() else " " for c in text)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _split(failure: str) -> list[str]:
    """The failures one fuzz phase joined with " / "."""
    return [f for f in re.split(r" / (?=(?:GET|POST|FailureGroup|[A-Z]\w+Error)\b)", failure) if f]


def _fuzz(r: dict[str, Any]) -> str:
    parts = []
    for phase in ("stateless", "stateful"):
        c = r[phase]["counts"]
        links = f", {c.get('linked', 0)} calls fed by {c.get('links', 0)} links" * (
            phase == "stateful"
        )
        parts.append(
            f"{phase}: {c.get('requests', 0):,} requests ({c.get('2xx', 0):,} 2xx, "
            f"{c.get('4xx', 0):,} 4xx, **{c.get('5xx', 0)} 5xx**{links}; "
            f"{c.get('excused', 0)} excused)"
            + (
                f", **{len(_split(r[phase]['failure']))} failed checks** (below)"
                if r[phase]["failure"]
                else ""
            )
        )
    total = sum(r[p]["counts"].get("requests", 0) for p in ("stateless", "stateful"))
    ops = r["stateless"]["counts"].get("operations", 0)
    return (f"**{total:,} requests** over {ops} operations; " + "; ".join(parts)
            + f"; {r['server_tracebacks']} server tracebacks")  # fmt: skip


def _crash(r: dict[str, Any]) -> str:
    kinds = ", ".join(f"{n} {k}" for k, n in r["kinds"].items())
    return (
        f"**{r['survived']} of {r['trials']} trials recovered** ({kinds}; {r['killed']} "
        f"killed mid-run, the rest finished first); {len(r['failures'])} failed; "
        f"{r['temp_files_after_kills']} temp-file sightings after kills, "
        f"{r.get('temp_files_at_end', '?')} left at the end (each removed by the next open "
        "once an hour old, as designed). After completing every "
        f"run: {'consistent' if r['final_ok'] else 'INCONSISTENT'}: {r['final_detail']}"
    )


def _commit(r: dict[str, Any]) -> str:
    return (
        f"**{r['survived']} of {r['trials']} trials recovered** ({r['in_commit']} killed "
        f"inside the commit of {r['papers']:,} papers). After completing the imports: "
        f"{'consistent' if r['final_ok'] else 'INCONSISTENT'}: {r['final_detail']}"
    )


def _phase(name: str, f: dict[str, Any]) -> str:
    return (f"{name} {f['seconds']:.0f} s: {f['requests']:,} searches, **{f['failed']} failed**,"
            f" p50 {f['p50']:.0f} ms, p99 {f['p99']:.0f} ms")  # fmt: skip


def _load(r: dict[str, Any]) -> str:
    phases = [
        _phase("idle", r["idle"]),
        _phase(
            f"during harvest of {r['harvested']} + import of {r['batch']} + embedding", r["busy"]
        ),
    ]
    if "reindex" in r:
        phases.append(_phase(f"during `reindex` (embedding {r['second']} more)", r["reindex"]))
    found = (
        f"harvested papers findable by keyword {r['keyword_findable_s']:.1f} s after the "
        f"harvest, by meaning {r['semantic_findable_s']:.1f} s after embedding"
    )
    missing = f"; NOT findable: {r['not_findable']}" if r["not_findable"] else ""
    return f"{r['clients']} clients; " + "; ".join(phases) + f"; {found}{missing}"


def _format(name: str, f: dict[str, Any]) -> str:
    """One input format's report: records read, landed and skipped."""
    read = f.get("records", f.get("read", 0))
    landed = f.get("added", 0) + f.get("updated", 0)
    return f"{name} {read} records, {landed} added or updated, {f.get('skipped', 0)} skipped"


def _hostile(r: dict[str, Any]) -> str:
    f = r.get("formats", {})
    names = ("oai-arXiv", "arxiv-api", "openalex+s2", "ror")
    per = "; ".join(_format(k, f[k]) for k in names if k in f)
    return (
        f"snapshot JSON lines: {r['rounds']} poisoned files imported twice, {r['imported']} "
        f"landed, {r['skipped']} reported and skipped; arXivRaw: {r['harvested']} harvested "
        f"around a huge version; {per}; {r['requests']} requests with 5,000-digit integers or "
        f"for hostile papers and {f.get('pages', 0)} more for every page the other formats "
        f"reached; **{len(r['failures'])} failures**"
    )


def _writers(r: dict[str, Any]) -> str:
    return (f"{r['rounds']} rounds of two writing commands at once: {r['finished']} finished, "
            f"{r['refused']} refused in one line; **{len(r['failures'])} failures**")  # fmt: skip


def _signin(r: dict[str, Any]) -> str:
    kinds = ", ".join(f"{k} {n:,}" for k, n in r["by_kind"].items())
    return (f"{r['requests']:,} account requests from 6 clients at once ({kinds}; kind and "
            f"status), {r['server_errors']} 5xx, {r['signed_up']} sign-ups; then a burst of "
            f"30 wrong passwords with the default limit: "
            f"{', '.join(f'{k} x{n}' for k, n in sorted(r['throttled'].items()))}; "
            f"**{len(r['failures'])} failures**")  # fmt: skip


def _props(r: dict[str, Any]) -> str:
    return f"{r['examples']:,} examples; {r['summary']}"


FIGURES = {"fuzz": _fuzz, "crash": _crash, "commit": _commit, "load": _load,
           "hostile": _hostile, "writers": _writers, "signin": _signin,
           "props": _props}  # fmt: skip


def _failures(name: str, r: dict[str, Any]) -> list[str]:
    out = [f"{name}: {f}" for f in r.get("failures", [])]
    for phase in ("stateless", "stateful", "idle", "busy", "reindex"):
        p = r.get(phase)
        if isinstance(p, dict):
            out += [f"{name} {phase}: {f}" for f in p.get("failures", [])[:5]]
            out += [f"{name} {phase}: {f}" for f in _split(p.get("failure") or "")]
    if r.get("server_traceback"):
        out.append(f"{name}: server traceback: {r['server_traceback']}")
    return [_one_line(f) for f in out]


def write_doc(results: Path) -> None:
    """The document from every result in ``results``; a campaign never run says so."""
    rows, details, failures = [], [], []
    for name in ORDER:
        path = results / f"{name}.json"
        if not path.exists():
            rows.append(f"| {NAMES[name]} | not run this round | | | | |")
            continue
        saved = json.loads(path.read_text())
        r, load = saved["result"], saved["load"]
        ok = "pass" if r.get("ok") else "**FAIL**"
        rows.append(
            f"| {NAMES[name]} | {saved['date']} | {saved['seconds'] / 60:.1f} min | "
            f"{load['min']:.1f}–{load['max']:.1f} (mean {load['mean']:.1f}) | {ok} | "
            f"`{saved['command']}` |"
        )
        figure = f"stopped: {r['error']}" if "error" in r else FIGURES[name](r)
        details.append(f"- **{NAMES[name]}**: {figure}")
        failures += _failures(name, r)
    text = TEMPLATE.read_text(encoding="utf-8").format(
        rows="\n".join(rows),
        details="\n".join(details),
        failures="\n".join(f"- {f}" for f in failures) or "- none",
    )
    DOC.write_text(text, encoding="utf-8")
