"""Config parsing: defaults, validation with one-line errors, env overrides, documentation."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from papersift.core.config import iter_settings
from papersift.core.config_hints import env_variable
from papersift.core.config_load import OTHER_VARIABLES, load_config
from papersift.core.errors import ConfigError
from papersift.core.settings_docs import config_toml, readme_table, with_table

ROOT = Path(__file__).resolve().parent.parent
TEXT_SUFFIXES = (".py", ".md", ".sh", ".toml", ".yml", ".yaml", ".cfg", ".service")


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
        ('[search]\npage_size = "ten"\n', "[search] page_size must be an integer, got 'ten'"),
        ('[search]\nconvex_weight = "x"\n', "[search] convex_weight must be a number, got 'x'"),
        ("[embedding]\nquantize = 1\n", "[embedding] quantize must be true or false, got 1"),
        ("[server]\nhost = 1\n", "[server] host must be a string, got 1"),
        ("[server]\nport = 65536\n", "[server] port must be <= 65535, got 65536"),
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
        ("[search]\npage_size = 500\n", "[search] page_size (500) must be at most [search] max"),
        ('[harvest]\nurl = "not-a-url"\n', "[harvest] url must be an http:// or https:// URL"),
        ('[harvest]\napi_url = "ftp://x"\n', "[harvest] api_url must be an http:// or https://"),
        ('[enrich]\nopenalex_url = "api.openalex.org"\n', "[enrich] openalex_url must be an"),
        ('[server]\nbase_url = "https://"\n', "[server] base_url must be an http:// or https://"),
        ("[search]\nmatch_fraction = nan\n", "[search] match_fraction must be a finite number"),
        ("[search]\ntitle_boost = inf\n", "[search] title_boost must be a finite number, got inf"),
        ("[embedding]\nmax_length = 1000\n", "[embedding] max_length must be <= 512, got 1000"),
        ('[server]\nhost = " "\n', "[server] host must not be empty; to listen on every addr"),
        ('[embedding]\nmodel = "m.onnx"\n', "[embedding] tokenizer must be set with model"),
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
    with pytest.raises(ConfigError, match="PAPERSIFT_SERVER_PORT must be an integer"):
        load_config(path, env={"PAPERSIFT_SERVER_PORT": "eighty"})
    cfg = load_config(None, env={"PAPERSIFT_EMBEDDING_FLOAT32_CACHE": "false"})
    assert cfg.embedding.float32_cache is False


@pytest.mark.parametrize(
    ("name", "value"),
    [("PAPERSIFT_SEARCH_SEMANTIC_FLOOR", "nan"), ("PAPERSIFT_SEARCH_TITLE_BOOST", "inf"),
     ("PAPERSIFT_SEARCH_CONVEX_WEIGHT", "NaN"), ("PAPERSIFT_HARVEST_DELAY_SECONDS", "-inf")],
)  # fmt: skip
def test_non_finite_numbers_are_refused(name: str, value: str) -> None:
    """NaN passed every bound (each comparison with it is false), inf every minimum."""
    with pytest.raises(ConfigError) as err:
        load_config(None, env={name: value})
    assert str(err.value) == f"config: {name} must be a finite number, got {value!r}"


def test_an_empty_host_is_refused() -> None:
    """It passed, and `serve` listened on every interface without saying so."""
    with pytest.raises(ConfigError) as err:
        load_config(None, env={"PAPERSIFT_SERVER_HOST": ""})
    assert str(err.value) == (
        "config: PAPERSIFT_SERVER_HOST must not be empty; to listen on every address, set it "
        "to 0.0.0.0 explicitly"
    )
    assert load_config(None, env={"PAPERSIFT_SERVER_HOST": "0.0.0.0"}).server.host == "0.0.0.0"


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="file not found"):
        load_config(tmp_path / "nope.toml", env={})


def test_cron_from_the_environment_is_checked_at_load() -> None:
    with pytest.raises(ConfigError, match="PAPERSIFT_SCHEDULE_EMBED must be a cron expression"):
        load_config(None, env={"PAPERSIFT_SCHEDULE_EMBED": "*/15 * *"})
    cfg = load_config(None, env={"PAPERSIFT_SCHEDULE_HARVEST": " 0 3 * * 1-5 "})
    assert cfg.schedule.harvest == "0 3 * * 1-5"


def test_urls_from_the_environment_are_checked_and_may_be_off() -> None:
    with pytest.raises(ConfigError, match="PAPERSIFT_HARVEST_API_URL must be an http://"):
        load_config(None, env={"PAPERSIFT_HARVEST_API_URL": "not-a-url"})
    env = {"PAPERSIFT_ENRICH_SEMANTICSCHOLAR_URL": " ", "PAPERSIFT_HARVEST_URL": " http://h/oai "}
    cfg = load_config(None, env=env)
    assert cfg.enrich.semanticscholar_url == "" and cfg.harvest.url == "http://h/oai"


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


def test_port_from_the_environment_is_a_port() -> None:
    with pytest.raises(ConfigError, match="PAPERSIFT_SERVER_PORT must be <= 65535, got '99999'"):
        load_config(None, env={"PAPERSIFT_SERVER_PORT": "99999"})
    assert load_config(None, env={"PAPERSIFT_SERVER_PORT": "65535"}).server.port == 65535


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("PAPERSIFT_SERVER_PROT", "PAPERSIFT_SERVER_PROT; did you mean PAPERSIFT_SERVER_PORT?"),
        ("PAPERSIFT_DATADIR", "PAPERSIFT_DATADIR; did you mean PAPERSIFT_DATA_DIR?"),
        # A misspelt section before a real key (it was offered [search] max_page_size).
        (
            "PAPERSIFT_SERACH_PAGE_SIZE",
            "PAPERSIFT_SERACH_PAGE_SIZE; did you mean PAPERSIFT_SEARCH_PAGE_SIZE?",
        ),
        ("PAPERSIFT_CONFIG_FILE", "PAPERSIFT_CONFIG_FILE; did you mean PAPERSIFT_CONFIG?"),
        ("PAPERSIFT_XYZZY", "PAPERSIFT_XYZZY; settings are PAPERSIFT_<SECTION>_<KEY>"),
    ],
)
def test_unknown_variable_is_an_error_naming_the_closest(name: str, message: str) -> None:
    """A typo in a variable is refused as a typo in config.toml is, not silently ignored."""
    with pytest.raises(ConfigError) as err:
        load_config(None, env={name: "1", "HOME": "/root", "PAPERSIFT_SERVER_PORT": "8001"})
    assert str(err.value).startswith(f"config: unknown environment variable {message}")
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    ("name", "meant"),
    [
        # A key without its section: every section's setting of it, [server]'s first.
        ("PAPERSIFT_PORT", "PAPERSIFT_SERVER_PORT or PAPERSIFT_MAIL_PORT"),
        ("PAPERSIFT_HOST", "PAPERSIFT_SERVER_HOST or PAPERSIFT_MAIL_HOST"),
        ("PAPERSIFT_WORKERS", "PAPERSIFT_SERVER_WORKERS"),
        ("PAPERSIFT_MAILTO", "PAPERSIFT_HARVEST_MAILTO or PAPERSIFT_ENRICH_MAILTO"),
        ("PAPERSIFT_PROT", "PAPERSIFT_SERVER_PORT or PAPERSIFT_MAIL_PORT"),  # and a typo
        ("PAPERSIFT_DELAY", "PAPERSIFT_HARVEST_DELAY_SECONDS or PAPERSIFT_ENRICH_DELAY_SECONDS"),
        ("PAPERSIFT_DIR", "PAPERSIFT_DATA_DIR"),
        ("PAPERSIFT_SERVER_PAGE_SIZE", "PAPERSIFT_SEARCH_PAGE_SIZE"),  # the wrong section
    ],
)
def test_a_variable_without_its_section_names_each_sections_setting(name: str, meant: str) -> None:
    """PAPERSIFT_PORT was answered with PAPERSIFT_MAIL_PORT alone, the closer string."""
    with pytest.raises(ConfigError) as err:
        load_config(None, env={name: "8765"})
    assert str(err.value) == f"config: unknown environment variable {name}; did you mean {meant}?"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[search]\npage_sise = 10\n", "unknown key [search] page_sise; did you mean page_size?"),
        ("[mail]\nhots = 'x'\n", "unknown key [mail] hots; did you mean host?"),
        ("[harvest]\ndelay = 1\n", "unknown key [harvest] delay; did you mean delay_seconds?"),
        ("[server]\npage_size = 3\n", "unknown key [server] page_size; page_size is a setting "
         "of [search]"),
        ("[search]\nport = 1\n", "unknown key [search] port; port is a setting of [server] and "
         "[mail]"),
        ("[server]\nurl = 'x'\n", "unknown key [server] url; did you mean base_url? (url is a "
         "setting of [harvest])"),
        ("[server]\npage_sise = 3\n", "unknown key [server] page_sise; did you mean [search] "
         "page_size?"),
        ("[serch]\n", "unknown section [serch]; did you mean [search]?"),
        ("page_size = 10\n", "page_size must be under its section, [search]"),
        ("port = 10\n", "port must be under its section, [server] or [mail]"),
    ],
)  # fmt: skip
def test_a_mistyped_or_misplaced_key_says_what_it_likely_meant(
    tmp_path: Path, text: str, message: str
) -> None:
    """`[search] page_sise` only listed the section's 28 keys."""
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, text), env={})
    assert str(err.value) == f"config: {message}"


def test_a_key_like_none_lists_the_sections_keys(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_config(write(tmp_path, "[feeds]\nxyzzy = 1\n"), env={})
    assert str(err.value) == (
        "config: unknown key [feeds] xyzzy (known: items, max_age, sitemap_urls)"
    )


def test_the_projects_own_variables_are_accepted(tmp_path: Path) -> None:
    """Every PAPERSIFT_* name the code, tests, docs, Makefile or Containerfile use is a
    setting or one of OTHER_VARIABLES, and loading with all of those set works."""
    used: set[str] = set()
    skip = {".venv", ".git", "build", "node_modules", ".hypothesis", ".mypy_cache"}
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip]
        for name in files:
            path = Path(folder) / name
            if path == Path(__file__).resolve():  # this file's typos are on purpose
                continue
            if name.endswith(TEXT_SUFFIXES) or name in ("Makefile", "Containerfile"):
                text = path.read_text("utf-8", errors="replace")
                used |= set(re.findall(r"\bPAPERSIFT_[A-Z0-9_]*[A-Z0-9]", text))
    settings = {env_variable(section, key) for section, key, _, _ in iter_settings()}
    assert used - settings - OTHER_VARIABLES == set()
    assert {"PAPERSIFT_CONFIG", "PAPERSIFT_MODEL_CACHE", "PAPERSIFT_MAIL_PASSWORD"} <= used
    load_config(None, env=dict.fromkeys(OTHER_VARIABLES, "x"))
    # The variable [mail] password_env names holds a password, not a setting.
    path = write(tmp_path, '[mail]\npassword_env = "PAPERSIFT_SMTP_SECRET"\n')
    assert load_config(path, env={"PAPERSIFT_SMTP_SECRET": "pw"}).mail.password_env


def test_readme_gives_the_recommendation_window_the_code_uses() -> None:
    """Without dates, /library/<id>/recommended and "For you" rank the DEFAULT_DAYS up to the
    newest paper in the index (``recommend.window``), not the last days of the calendar."""
    from papersift.engine.recommend import DEFAULT_DAYS

    readme = " ".join((ROOT / "README.md").read_text("utf-8").split())
    assert f"the last {DEFAULT_DAYS} days" not in readme
    assert readme.count(f"the {DEFAULT_DAYS} days up to the newest paper in the index") == 2


def test_the_data_directory_is_known_as_the_default_only_when_nothing_named_it(
    tmp_path: Path,
) -> None:
    """What "no index" needs to say that the working directory's default was used."""
    assert load_config(None, env={}).data_dir_defaulted
    assert not load_config(None, env={"PAPERSIFT_DATA_DIR": "papersift-data"}).data_dir_defaulted
    assert not load_config(write(tmp_path, ""), env={}).data_dir_defaulted


def test_an_empty_data_dir_is_refused_not_read_as_the_working_folder(tmp_path: Path) -> None:
    """An empty ``[data] dir`` or ``PAPERSIFT_DATA_DIR=`` would have been the folder a command
    runs in: an import filled it with the store and indexes."""
    (tmp_path / "config.toml").write_text('[data]\ndir = ""\n')
    with pytest.raises(ConfigError, match=r"\[data\] dir is empty"):
        load_config(tmp_path / "config.toml", env={})
    with pytest.raises(ConfigError, match="PAPERSIFT_DATA_DIR is empty"):
        load_config(None, env={"PAPERSIFT_DATA_DIR": " "})
