"""kill -9 during a harvest and while the keyword index commits; after each kill a restart
finds store, Tantivy and FAISS in agreement and ``papersift doctor`` reports no FAIL; a resumed
harvest ends with exactly the papers of an uninterrupted one. A bounded version of the
campaign in ``bench/reliability.py`` (which runs many more trials).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from papersift.engine.datadir import DataDir
from papersift.indexer.build import import_files
from papersift.indexer.harvest import harvest
from tests.corpus import make_config, sample_records, write_jsonl
from tests.reliability_kit import (
    HARVEST,
    PAPERSIFT,
    WINDOW,
    check,
    harvest_cmd,
    kill_at,
    kill_in_commit,
    oai_server,
    paper_set,
    run,
)

pytestmark = pytest.mark.slow  # left out by `make test-fast`


@pytest.fixture(scope="module")
def oai_url() -> Iterator[str]:
    with oai_server() as url:
        yield url


def _with_papers(root: Path, every: int) -> tuple[Path, Path]:
    """A data directory holding some real demo papers; (config path, their JSON lines)."""
    root.mkdir()
    config = make_config(root, harvest=HARVEST)
    source = write_jsonl(root / "papers.jsonl", sample_records(every=every))
    data = DataDir(config)
    try:
        import_files(data, [source])
    finally:
        data.close()
    return root / "config.toml", source


def test_harvest_killed_at_random_points_then_resumed(oai_url: str, tmp_path: Path) -> None:
    (tmp_path / "reference").mkdir()
    reference = make_config(tmp_path / "reference", harvest=HARVEST)
    data = DataDir(reference)
    try:
        harvest(data, url=oai_url, date_from=date.fromisoformat(WINDOW))
    finally:
        data.close()
    harvested = paper_set(tmp_path / "reference" / "config.toml")
    assert len(harvested) == 12

    config_path, _ = _with_papers(tmp_path / "crash", every=400)
    imported = paper_set(config_path)
    rng = random.Random(9)
    outcomes = []
    for trial in range(2):
        if trial == 1:  # while a page's lexical commit is writing its segment
            nth = rng.randint(1, 3)
            lexical = tmp_path / "crash" / "data" / "lexical"
            outcomes.append(kill_in_commit(harvest_cmd(config_path, oai_url), lexical, rng, nth))
        else:
            delay = rng.uniform(0.8, 2.5)  # interpreter start-up, then pages 0.2 s apart
            outcomes.append(kill_at(harvest_cmd(config_path, oai_url), delay))
        assert check(config_path) == [], (trial, outcomes)
    run(harvest_cmd(config_path, oai_url))
    assert check(config_path) == []
    assert paper_set(config_path) == {**imported, **harvested}


def test_import_killed_while_the_index_commits(tmp_path: Path) -> None:
    config = make_config(tmp_path)
    source = write_jsonl(tmp_path / "papers.jsonl", sample_records(every=12))
    config_path = tmp_path / "config.toml"
    cmd = [*PAPERSIFT, "import", "--config", str(config_path), str(source)]
    outcome = kill_in_commit(cmd, config.data_dir / "lexical", random.Random(3))
    assert check(config_path) == [], outcome
    run(cmd)
    assert check(config_path) == []
    assert len(paper_set(config_path)) == len({r["id"] for r in sample_records(every=12)})
