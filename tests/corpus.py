"""Builders for small real test corpora cut from the bundled demo corpus (real arXiv papers)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.core.resources import demo_corpus_path
from papersift.engine.store import PaperStore

# Papers the tests look up by id: a new-style id shown on public sites, an old-style id.
REQUIRED_IDS = ("2401.10241", "2208.08124", "2402.02447", "cmp-lg/9405001")


def demo_records() -> list[dict[str, Any]]:
    with gzip.open(demo_corpus_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def sample_records(every: int = 20) -> list[dict[str, Any]]:
    """Every ``every``-th demo paper plus the required ones: ~320 real papers."""
    records = demo_records()
    chosen = [r for i, r in enumerate(records) if i % every == 0 or r["id"] in REQUIRED_IDS]
    return chosen


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return path


def make_config(root: Path, **sections: dict[str, Any]) -> Config:
    """A config whose data directory is ``root/data``; extra settings per section."""
    # Tests hammer the API from one address: no rate limit unless a test sets one.
    sections = {**sections, "server": {"rate_limit": 0, **sections.get("server", {})}}
    lines = ["[data]", f'dir = "{root / "data"}"', 'bootstrap = "none"']
    for name, values in sections.items():
        if name != "data":
            lines.append(f"[{name}]")
        for k, v in values.items():
            lines.append(f"{k} = {json.dumps(v)}")
    path = root / "config.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_config(path, env={})


def add_merged_researcher(store: PaperStore, heir: int) -> int:
    """A researcher row merged into ``heir`` as ``indexer.identity`` leaves one (no papers,
    a ``merged_into``): its id."""
    with store.transaction() as db:
        gone = db.execute(
            "INSERT INTO researchers (name, key, block, papers, merged_into) "
            "VALUES ('Gone', 'gone', 'gone', 0, ?)",
            (heir,),
        ).lastrowid
    assert gone is not None
    return int(gone)
