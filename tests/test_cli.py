"""The CLI as a user runs it: a real subprocess, JSON output, one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from papersift.core.config import Config
from tests.corpus import demo_records, write_jsonl

COMMANDS = ("import", "index", "search", "stats", "serve")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "papersift", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=full_env,
    )


def config_path(config: Config) -> str:
    return str(config.base_dir / "config.toml")


@pytest.mark.parametrize("command", COMMANDS)
def test_help(command: str) -> None:
    out = run(command, "--help")
    assert out.returncode == 0
    assert "--config" in out.stdout


@pytest.mark.slow
def test_search_json(built_config: Config) -> None:
    out = run("search", "--config", config_path(built_config), "--json", "parsing grammar")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total"] > 0 and data["mode"] == "hybrid"
    hit = data["hits"][0]
    assert {"id", "title", "authors", "categories", "published", "score"} <= hit.keys()
    # The same "why" as the API's hits: ranks, the fused parts, the query words it holds.
    why = hit["why"]
    assert why["fused"]["method"] in ("convex", "rrf")
    assert why["keyword_rank"] or why["semantic_rank"]
    assert set(why["matched"]) <= {"title", "abstract", "authors"}
    assert {w for words in why["matched"].values() for w in words} & {"parsing", "grammar"}
    assert {"categories", "years"} <= data["facets"].keys()
    filtered = json.loads(
        run(
            "search",
            "--config",
            config_path(built_config),
            "--json",
            "--category",
            "cs.CL",
            "--sort",
            "newest",
            "--mode",
            "keyword",
            "language",
        ).stdout
    )
    assert all("cs.CL" in h["categories"] for h in filtered["hits"])


def test_stats_json(built_config: Config) -> None:
    out = run("stats", "--config", config_path(built_config), "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["papers"] > 300 and data["embedded"] == data["papers"]
    assert data["coverage"] == 1.0 and data["researchers_pending"] == 0


@pytest.mark.slow
def test_import_and_index_json(tmp_path: Path, fresh_config: Config) -> None:
    path = write_jsonl(tmp_path / "few.jsonl", demo_records()[:12])
    cfg = config_path(fresh_config)
    out = run("import", "--config", cfg, "--json", str(path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["added"] == 12
    out = run("stats", "--config", cfg, "--json")
    assert json.loads(out.stdout)["researchers_pending"] == 12  # left to the backlog
    out = run("index", "--config", cfg, "--json", "--limit", "5")
    assert json.loads(out.stdout)["embedded"] == 5
    assert json.loads(out.stdout)["clustered_now"] == 12
    out = run("stats", "--config", cfg, "--json")
    assert json.loads(out.stdout)["researchers_pending"] == 0
    out = run("index", "--config", cfg, "--json")
    assert json.loads(out.stdout)["embedded"] == 12


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("search", "x", "--page", "0"), "must be a whole number"),
        (("import", "/nonexistent/file.jsonl"), "no such file"),
        (("search", "x", "--from", "2024-13-01"), "not a date"),
    ],
)
def test_bad_input_is_one_line(args: tuple[str, ...], needle: str, fresh_config: Config) -> None:
    out = run(*args, "--config", config_path(fresh_config))
    assert out.returncode != 0
    assert needle in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_bad_config_and_missing_index(tmp_path: Path, fresh_config: Config) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[search]\npage_size = -1\n")
    out = run("stats", "--config", str(bad))
    assert out.returncode == 1
    assert out.stderr.strip().count("\n") == 0 and "page_size" in out.stderr
    out = run("search", "--config", config_path(fresh_config), "x")
    assert out.returncode == 1 and "papersift import" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("where", ["/proc/nope", "/dev/null/sub"])
def test_unusable_data_dir_is_one_line(where: str, tmp_path: Path) -> None:
    """A data directory that cannot be created: one line naming it and the setting."""
    source = tmp_path / "papers.jsonl"
    write_jsonl(source, demo_records()[:2])
    for args in (("import", str(source)), ("index",)):
        out = run(*args, env={"PAPERSIFT_DATA_DIR": where})
        assert out.returncode == 1, out.stderr
        assert "Traceback" not in out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and where in lines[0], out.stderr
        assert "PAPERSIFT_DATA_DIR" in lines[0] or "no index" in lines[0]
