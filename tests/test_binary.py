"""The one-file executable that `make binary` builds, run with no Python around it.

The build is a step of its own (`make test` runs `make binary` before pytest; 2-4 minutes on
2 busy cores, skipped when the content-hash stamp is current): these tests only check that
`dist/papersift` is current and fail, saying so, when it is not. The binary is copied out of
the repository and run under `env -i` (PATH=/usr/bin:/bin, HOME and cwd in a temp folder):
once bootstrapping the bundled demo corpus, once with a lab's config file. Both are `slow`
(the fast stage, `make test-fast`, leaves them out).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.corpus import demo_records, write_jsonl
from tests.web_helpers import parse_html

ROOT = Path(__file__).resolve().parent.parent


def _load_clean_run() -> Any:
    # By path: the folder name `packaging` belongs to the installed distribution of that name.
    spec = spec_from_file_location("papersift_clean_run", ROOT / "packaging" / "clean_run.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


clean_run = _load_clean_run()

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # two starts on a busy machine


@pytest.fixture(scope="module")
def binary(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """dist/papersift (current for these sources), copied to a folder outside the repository."""
    check = subprocess.run(
        [sys.executable, str(ROOT / "packaging" / "build_binary.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    if check.returncode != 0:
        pytest.fail(f"{check.stdout.strip()}: run `make binary` first (`make test` does)")
    target = tmp_path_factory.mktemp("machine") / "papersift"
    shutil.copy2(ROOT / "dist" / "papersift", target)
    yield target
    target.unlink()  # 130 MiB; pytest keeps the temp folders of recent sessions


def search(server: Any, query: str, mode: str) -> list[dict[str, Any]]:
    result = server.json(f"/api/v1/search?q={quote(query)}&mode={mode}&page_size=10")
    return [h["paper"] for h in result["hits"]]


def assert_self_contained(server: Any) -> None:
    """Nothing the running process (bootloader and Python child) maps comes from the
    repository, the venv or the Python installation that built it."""
    mapped = clean_run.mapped_files(server.process.pid)
    assert any("libpython3" in p for p in mapped), "the Python child process was not found"
    outside = {str(ROOT), sys.prefix, sys.base_prefix}
    leaks = sorted(p for p in mapped if any(p.startswith(o + os.sep) for o in outside))
    assert not leaks, leaks


def test_serves_the_demo_corpus_without_python(binary: Path, tmp_path: Path) -> None:
    demo = {r["id"]: r for r in demo_records()}
    paper = demo["2401.10241"]
    with clean_run.serving(binary, tmp_path) as server:
        health = server.json("/healthz")
        # 78 demo records repeat a paper already imported (another version): not counted twice.
        assert health["status"] == "ok" and 0.95 * len(demo) < health["papers"] <= len(demo)
        assert_self_contained(server)
        hits = search(server, paper["title"], "keyword")
        assert hits[0]["id"] == "2401.10241"
        assert {h["id"] for h in hits} <= demo.keys()
        # Hybrid embeds the query with the bundled ONNX model inside the binary.
        assert "2401.10241" in [h["id"] for h in search(server, paper["title"], "hybrid")]
        # The word lists inside the binary: a real word is not "corrected", a typo is.
        typed = server.json("/api/v1/search?q=halo+langauge&mode=keyword&autocorrect=0")
        assert typed["suggestion"] == "halo language"
        assert "no paper in this index holds 'halo'" in typed["warnings"]
        status, body = server.get(urlsplit(hits[0]["url"]).path)
        assert status == 200
        doc = parse_html(body.decode())
        cite = doc.cssselect('meta[name="citation_arxiv_id"]')[0].get("content")
        assert cite == "2401.10241"
        assert " ".join(doc.cssselect("h1")[0].text_content().split()) == " ".join(
            paper["title"].split()
        )
    assert (tmp_path / "papersift-data" / "manifest.json").is_file()  # in cwd, not the repo


def test_serves_a_lab_corpus_from_its_config_file(binary: Path, tmp_path: Path) -> None:
    lab = tmp_path / "lab"
    lab.mkdir()
    records = [r for r in demo_records()[::600] if r["id"] != "2401.10241"]
    write_jsonl(lab / "papers.jsonl", records)
    (lab / "config.toml").write_text(
        '[data]\ndir = "data"\nbootstrap = "papers.jsonl"\n', encoding="utf-8"
    )
    elsewhere = tmp_path / "elsewhere"  # relative paths resolve against the config's folder
    elsewhere.mkdir()
    with clean_run.serving(
        binary, tmp_path, "--config", str(lab / "config.toml"), cwd=elsewhere
    ) as server:
        assert server.json("/healthz")["papers"] == len(records)
        assert server.get("/api/v1/papers/2401.10241")[0] == 404  # a demo paper, not the lab's
        # A plainly spelled id (the snapshot also has float-mangled ones like 1910.0572300000001).
        target = next(r for r in records[3:] if re.fullmatch(r"\d{4}\.\d{5}", r["id"]))
        assert search(server, target["title"], "keyword")[0]["id"] == target["id"]
        server.wait_embedded()  # the background job embeds the lab's papers with the model
        assert search(server, target["title"], "semantic")[0]["id"] == target["id"]
    assert (lab / "data" / "manifest.json").is_file()
    assert not (elsewhere / "papersift-data").exists()
