"""Config parsing: defaults, validation with one-line errors, env overrides, documentation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from papersift.core.config import iter_settings, load_config
from papersift.core.errors import ConfigError
from papersift.core.settings_docs import config_toml, readme_table, with_table

ROOT = Path(__file__).resolve().parent.parent


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_config_equals_defaults() -> None:
    assert load_config(ROOT / "config.toml", env={}) == load_config(None, env={}).__class__(
        base_dir=ROOT
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[search]\npage_sise = 3\n", "unknown key [search] page_sise"),
        ("[serch]\n", "unknown section [serch]"),
        ('[search]\npage_size = "ten"\n', "[search] page_size must be a int"),
        ("[search]\npage_size = 0\n", "[search] page_size must be >= 1"),
        ('[search]\nfusion = "mean"\n', "[search] fusion must be one of convex, rrf"),
        ("[search]\nconvex_weight = 1.5\n", "convex_weight must be <= 1.0"),
        ("[search]\nsemantic_floor = 2\n", "semantic_floor must be <= 1.0"),
        ("[search\n", "not valid TOML"),
        ("search = 3\n", "[search] must be a table"),
        ("[feeds]\nsitemap_urls = 50001\n", "[feeds] sitemap_urls must be <= 50000"),
        ('[schedule]\nembed = "every 15 minutes"\n', "[schedule] embed must be a cron expression"),
        ('[schedule]\nharvest = "0 3 * * 1-5 7"\n', "[schedule] harvest must be a cron"),
        ('[schedule]\nenrich = "61 * * * *"\n', "[schedule] enrich must be a cron expression"),
        ("[schedule]\nmaintenance = 5\n", "[schedule] maintenance must be a string"),
        ('[lab]\nror = "03acrzv42"\n', "[lab] ror must be a ROR id"),
    ],
)
def test_bad_config_is_one_line_naming_it(tmp_path: Path, text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text), env={})
    assert needle in str(err.value)
    assert "\n" not in str(err.value)


def test_env_overrides(tmp_path: Path) -> None:
    path = write(tmp_path, '[data]\ndir = "x"\n[server]\nport = 9000\n')
    cfg = load_config(path, env={"PAPERSIFT_DATA_DIR": "/srv/ps", "PAPERSIFT_SERVER_PORT": "8123"})
    assert cfg.data_dir == Path("/srv/ps") and cfg.server.port == 8123
    assert load_config(path, env={}).data_dir == tmp_path / "x"  # relative to the file
    with pytest.raises(ConfigError, match="PAPERSIFT_SERVER_PORT must be a int"):
        load_config(path, env={"PAPERSIFT_SERVER_PORT": "eighty"})
    cfg = load_config(None, env={"PAPERSIFT_EMBEDDING_FLOAT32_CACHE": "false"})
    assert cfg.embedding.float32_cache is False


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.toml", env={})


def test_cron_from_the_environment_is_checked_at_load() -> None:
    with pytest.raises(ConfigError, match="PAPERSIFT_SCHEDULE_EMBED must be a cron expression"):
        load_config(None, env={"PAPERSIFT_SCHEDULE_EMBED": "*/15 * *"})
    cfg = load_config(None, env={"PAPERSIFT_SCHEDULE_HARVEST": " 0 3 * * 1-5 "})
    assert cfg.schedule.harvest == "0 3 * * 1-5"


def test_lab_ror_is_stored_bare() -> None:
    cfg = load_config(None, env={"PAPERSIFT_LAB_ROR": "https://ror.org/03ACRZV41"})
    assert cfg.lab.ror == "03acrzv41"


def test_docs_are_generated_from_the_declarations() -> None:
    """config.toml and the README table are exactly what the declarations generate."""
    assert (ROOT / "config.toml").read_text("utf-8") == config_toml()
    readme = (ROOT / "README.md").read_text("utf-8")
    assert readme == with_table(readme)
    table = readme_table()
    for section, key, _, help_text in iter_settings():
        assert help_text and f"`[{section}] {key}`" in table


def test_every_setting_is_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    shipped = (ROOT / "config.toml").read_text(encoding="utf-8")
    for section, key, _, help_text in iter_settings():
        assert help_text
        assert f"`[{section}] {key}`" in readme, f"README lacks [{section}] {key}"
        assert re.search(rf"^\[{section}\][\s\S]*?^{key} = ", shipped, re.M) or re.search(
            rf"^\[{section}\][\s\S]*?^# \[\[{section}\.{key}\]\]$", shipped, re.M
        ), key  # an array of tables is shown as a commented example
