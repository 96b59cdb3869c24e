"""The CLI as its --help and the README describe it: every option explained, free text that
begins with '-', --config before or after `user`'s action, and the small output rules (a
real subprocess, as a user runs it)."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from papersift.cli import FREE_TEXT, build_parser
from papersift.cli_args import JSON_HELP, text_last
from papersift.core.config import Config
from papersift.engine.datadir import DataDir
from papersift.engine.results import SearchRequest
from papersift.engine.search import open_engine
from tests.test_cli import config_path, run


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command's parser, `user`'s actions included, by the command line that reaches it."""
    _, commands = build_parser()
    out = []
    for name, parser in commands.items():
        out.append((name, parser))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                out += [(f"{name} {a}", p) for a, p in action.choices.items()]
    return out


@pytest.mark.parametrize(("command", "parser"), _parsers(), ids=lambda x: str(x))
def test_every_option_and_argument_says_what_it_is(
    command: str, parser: argparse.ArgumentParser
) -> None:
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        name = "/".join(action.option_strings) or action.metavar or action.dest
        assert action.help, f"`papersift {command}`: {name} has no help"
        if "--json" in action.option_strings:
            assert action.help == JSON_HELP, f"`papersift {command} --json`: {action.help!r}"


def test_help_gives_the_defaults_the_code_uses() -> None:
    """The defaults --help states are the ones that apply (settings, the password rule)."""
    from papersift.core.config_search import SearchConfig
    from papersift.engine.members import MIN_PASSWORD

    search = " ".join(run("search", "--help").stdout.split())
    d = SearchConfig()
    needles = (
        "--sort {relevance,newest,oldest,cited} default: relevance",
        "(default: 1)",
        f"[search] page_size, {d.page_size}",
        f"max_page_size, {d.max_page_size}",
        "cs matches all cs.*",
        "(repeatable: by all of them)",
        "$PAPERSIFT_CONFIG",
        "built-in defaults",
    )
    for needle in needles:
        assert needle in search, needle
    for action in ("add", "reset"):
        text = " ".join(run("user", action, "--help").stdout.split())
        assert "generated" in text, text
        assert f"at least {MIN_PASSWORD} characters" in text
    assert "where the last run ended" in " ".join(run("harvest", "--help").stdout.split())
    assert "loads no model" in " ".join(run("stats", "--help").stdout.split())


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["search", "-vision transformer"], ["search", "--", "-vision transformer"]),
        (["search", "-x", "--json"], ["search", "--json", "--", "-x"]),
        (["search", "--page", "2", "-x"], ["search", "--page", "2", "--", "-x"]),
        (["search", "--page-s", "5", "-x"], ["search", "--page-s", "5", "--", "-x"]),
        (["search", "--researcher", "-a b", "x"], ["search", "--researcher", "-a b", "x"]),
        (["search", "--mode=keyword", "-v", "-x"], ["search", "--mode=keyword", "-v", "--", "-x"]),
        (["search", "-vh"], ["search", "-vh"]),  # -v and -h
        (["search", "--", "-x"], ["search", "--", "-x"]),
        (["match-affiliation", "-Dept. X"], ["match-affiliation", "--", "-Dept. X"]),
        (["add", "-x"], ["add", "-x"]),
    ],
)
def test_free_text_that_begins_with_a_dash_goes_behind_double_dash(
    argv: list[str], expected: list[str]
) -> None:
    _, commands = build_parser()
    assert text_last(argv, {c: commands[c] for c in FREE_TEXT}) == expected


@pytest.mark.slow
def test_a_query_that_begins_with_a_dash_is_searched(small: Config) -> None:
    """README's `-word` syntax as the first word: the whole text is the query (it was
    "argument -v/--verbose: ignored explicit argument 'ision transformer'")."""
    with open_engine(small) as engine:
        want = engine.search(SearchRequest(query="-language model", mode="keyword", page_size=100))
        every = engine.search(SearchRequest(query="model", mode="keyword")).total
    assert 0 < want.total < every  # the exclusion excludes
    for args in (("-language model", "--json"), ("--json", "-language model")):
        out = run("search", "--config", config_path(small), "--mode", "keyword",
                  "--page-size", "100", *args)  # fmt: skip
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["query"] == "-language model"
        assert [h["id"] for h in data["hits"]] == [h.paper.arxiv_id for h in want.hits]
    out = run("match-affiliation", "--config", config_path(small), "-Dept. of Physics, Oxford")
    assert out.returncode == 0 and out.stdout.startswith("no match"), out.stderr


@pytest.mark.slow
def test_user_takes_config_before_or_after_its_action(fresh_config: Config) -> None:
    DataDir(fresh_config).close()
    path = config_path(fresh_config)
    for argv in (("user", "--config", path, "list"), ("user", "list", "--config", path),
                 ("user", "-v", "--config", path, "list", "--json")):  # fmt: skip
        out = run(*argv)
        assert out.returncode == 0, out.stderr
        assert out.stdout in ("no accounts yet; add one with `papersift user add EMAIL`\n", "[]\n")


def test_config_and_verbose_go_before_the_command_or_after_it(
    small: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`papersift --config X stats` was "argument COMMAND: invalid choice: 'X'"; as the
    README and --help say, both places work, and given twice the later wins."""
    import logging

    from papersift.cli import main

    path = config_path(small)
    papers = DataDir(small, create=False)
    count = papers.store.count()
    papers.close()
    gone = str(tmp_path / "missing.toml")
    for argv in (["--config", path, "stats", "--json"], ["stats", "--config", path, "--json"],
                 [f"--config={path}", "stats", "--json"], ["-v", "--config", path, "stats",
                 "--json"], ["--config", gone, "stats", "--json", "--config", path]):  # fmt: skip
        logging.getLogger("papersift").setLevel(logging.INFO)
        assert main(argv) == 0, (argv, capsys.readouterr().err)
        assert json.loads(capsys.readouterr().out)["papers"] == count
        verbose = logging.getLogger("papersift").level == logging.DEBUG
        assert verbose == ("-v" in argv), argv
    assert main(["--config", path, "stats", "--config", gone]) == 1  # the later one
    assert capsys.readouterr().err == f"papersift: error: config: file not found: {gone}\n"
    # A query that begins with '-' after options of the main parser is still the query.
    argv = ["--config", path, "-v", "search", "--mode", "keyword", "--json", "-language model"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["query"] == "-language model"
    assert main(["--config", path, "user", "list", "--json"]) == 0
    assert capsys.readouterr().out == "[]\n"
    # --help says so: the options are on the main parser and on each command.
    assert main(["stats", "--config", path, "--json"]) == 0
    capsys.readouterr()
    with pytest.raises(SystemExit):
        main(["--help"])
    top = capsys.readouterr().out
    assert (
        top.startswith("usage: papersift [-h] [--config PATH] [-v]") and "$PAPERSIFT_CONFIG" in top
    )


def test_the_command_is_found_past_the_main_parsers_options() -> None:
    parser, commands = build_parser()
    free = {c: commands[c] for c in FREE_TEXT}
    for before in (["--config", "c.toml"], ["--config=c.toml"], ["-v", "--conf", "c.toml"]):
        argv = [*before, "search", "-x"]
        assert text_last(argv, free, parser) == [*before, "search", "--", "-x"]
    assert text_last(["--config", "search", "-x"], free, parser) == ["--config", "search", "-x"]


@pytest.mark.slow
def test_enrich_takes_ids_or_files_not_both(small: Config) -> None:
    saved = small.base_dir / "work.json"
    saved.write_text("{}", encoding="utf-8")
    for args in (("--from-file", str(saved), "2401.10241"),
                 ("2401.10241", "--from-file", str(saved))):  # fmt: skip
        out = run("enrich", "--config", config_path(small), *args)
        assert out.returncode == 1
        assert out.stderr.startswith(
            "papersift: error: give either arXiv ids or --from-file FILE..., not both"
        ), out.stderr
        assert out.stderr.count("\n") == 1


@pytest.mark.slow
def test_search_counts_in_words_and_says_a_page_is_past_the_last(small: Config) -> None:
    cfg = config_path(small)
    one = run("search", "--config", cfg, "--json", "--mode", "keyword", "--sort", "newest", "")
    newest = json.loads(one.stdout)["hits"][0]["id"]
    out = run("search", "--config", cfg, "--mode", "keyword", newest)
    assert out.stdout.startswith("1 result ("), out.stdout  # not "1 results"
    out = run("search", "--config", cfg, "--mode", "keyword", "--json", "model")
    total = json.loads(out.stdout)["total"]
    assert total > 1
    out = run("search", "--config", cfg, "--mode", "keyword", "--page", "20", "model")
    assert out.returncode == 0 and out.stdout.startswith(f"{total} results ("), out.stdout
    assert re.fullmatch(r"note: page 20 is past the last page \(\d\)\n", out.stderr), out.stderr
    out = run("search", "--config", cfg, "--mode", "keyword", "--page", "20", "--json", "model")
    assert [w for w in json.loads(out.stdout)["warnings"] if "past the last page" in w]


@pytest.mark.parametrize("command", ["import", "import-ror"])
def test_a_directory_is_not_a_missing_file(command: str, fresh_config: Config) -> None:
    where = str(fresh_config.base_dir)
    out = run(command, "--config", config_path(fresh_config), where)
    assert out.returncode == 1
    assert out.stderr == f"papersift: error: {where} is a directory; name the " + (
        "snapshot files in it\n" if command == "import" else "ROR data file in it\n"
    )


@pytest.mark.slow
def test_an_empty_papersift_config_is_not_given(small: Config) -> None:
    """`PAPERSIFT_CONFIG= papersift stats` read the directory "." as the config file."""
    out = run("stats", "--json",
              env={"PAPERSIFT_CONFIG": "", "PAPERSIFT_DATA_DIR": str(small.data_dir)})  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["papers"] > 0
