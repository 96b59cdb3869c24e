"""A data directory with a damaged or missing part: the commands say so in one line (as
``doctor`` does) or repair it, never a traceback, never a silent empty answer (found by a
new-user walk-through of the CLI)."""

from __future__ import annotations

import shutil

import pytest

from papersift.cli import main
from papersift.core.config import Config
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine


def cli(config: Config, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main([argv[0], "--config", str(config.base_dir / "config.toml"), *argv[1:]])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("command", [["search", "parsing"], ["stats"], ["index"]])
def test_a_store_that_is_no_database_is_one_line(
    small: Config, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    (small.data_dir / "papers.sqlite").write_bytes(b"garbage\n" * 100)
    code, err = cli(small, capsys, *command)
    assert code == 1 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert line.startswith("papersift: error: ") and "papers.sqlite cannot be read" in line
    assert "restore the data directory from a backup" in line


def test_a_damaged_keyword_index_is_one_line(
    small: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    (small.data_dir / "lexical" / "meta.json").write_text("{")
    code, err = cli(small, capsys, "search", "parsing")
    assert code == 1 and "Traceback" not in err
    (line,) = err.strip().splitlines()
    assert "keyword index" in line and "cannot be opened" in line and "doctor --fix" in line


def test_a_lost_keyword_index_is_rebuilt_not_searched_empty(small: Config) -> None:
    """Deleted, it made every keyword search answer 0 results without a word."""
    with open_engine(small) as engine:
        before = engine.search(SearchRequest("parsing", mode="keyword")).total
    assert before > 0
    shutil.rmtree(small.data_dir / "lexical")
    with open_engine(small) as engine:
        assert engine.data.lexical_rebuilt
        assert engine.search(SearchRequest("parsing", mode="keyword")).total == before
    with open_engine(small) as engine:  # once
        assert not engine.data.lexical_rebuilt
