"""Load while writing: a real ``papersift serve`` keeps answering searches, none failing,
while other processes harvest new papers (recorded OAI-PMH pages on a local server) and
embed them; the new papers then become findable through the server, by keyword and by
meaning. Latency is printed, not asserted (``bench/reliability.py`` reports it).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from papersift.core.config import Config
from tests.corpus import make_config
from tests.load_kit import LoadGenerator, serve, wait_findable
from tests.reliability_kit import HARVEST, PAPERSIFT, harvest_cmd, oai_server, paper_set, run

pytestmark = pytest.mark.slow  # left out by `make test-fast`

SCHEDULE = {"refresh_seconds": 0.5, "embed": "", "maintenance": ""}


def test_searches_never_fail_while_papers_are_harvested_and_embedded(
    built_config: Config, tmp_path: Path
) -> None:
    shutil.copytree(built_config.data_dir, tmp_path / "data")
    make_config(tmp_path, harvest=HARVEST, schedule=SCHEDULE)
    config_path = tmp_path / "config.toml"
    before = paper_set(config_path)
    with (
        oai_server() as oai_url,
        serve(config_path, tmp_path / "serve.log") as url,
        LoadGenerator(url, clients=1) as load,
    ):
        run(harvest_cmd(config_path, oai_url))  # --no-embed: `index` embeds them
        new = {i: v[1] for i, v in paper_set(config_path).items() if i not in before}
        assert len(new) == 12
        assert wait_findable(url, new, "keyword") == []
        run([*PAPERSIFT, "index", "--config", str(config_path)])
        assert wait_findable(url, new, "semantic") == []
    stats = load.stats
    print(f"{stats.requests} requests, p50 {stats.percentile(50):.0f} ms, "
          f"p99 {stats.percentile(99):.0f} ms")  # fmt: skip
    assert stats.failures == []
    assert stats.requests > 0
