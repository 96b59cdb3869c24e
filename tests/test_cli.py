"""The CLI as a user runs it: a real subprocess, JSON output, one-line errors."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.datastructures import QueryParams

from papersift.core.config import Config
from papersift.engine.search import SearchEngine
from papersift.server.params import parse_search
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
        (("match-affiliation", ""), "error: the affiliation text is empty; give one, e.g."),
        (("match-affiliation", "  "), "error: the affiliation text is empty; give one, e.g."),
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


@pytest.mark.slow
def test_search_dates_are_read_as_the_web_reads_them(
    built_config: Config, engine: SearchEngine
) -> None:
    """``--from 1994 --to 1995-02`` is what the web's ``from=1994&to=1995-02`` asks for: the
    same papers, the partial ``--to`` running to the end of February."""
    search = ("search", "--config", config_path(built_config), "--json", "--mode", "keyword",
              "--sort", "oldest", "--page-size", "100", "cat:cs.CL")  # fmt: skip

    def ids(*dates: str) -> list[str]:
        out = run(*search, *dates)
        assert out.returncode == 0, out.stderr
        return [hit["id"] for hit in json.loads(out.stdout)["hits"]]

    cli = ids("--from", "1994", "--to", "1995-02")
    query = "q=cat:cs.CL&mode=keyword&sort=oldest&page_size=100&from=1994&to=1995-02"
    web = engine.search(parse_search(QueryParams(query), built_config.search))
    assert cli == [hit.paper.arxiv_id for hit in web.hits]
    assert cli == ids("--from", "1994-01-01", "--to", "1995-02-28")
    # The corpus has papers of 9 and 21 February 1995: the month runs to its last day.
    assert len(cli) > len(ids("--from", "1994-01-01", "--to", "1995-02-01")) > 0


@pytest.mark.slow
def test_backwards_dates_are_one_line_and_exit_1(built_config: Config) -> None:
    """The web's 400 "'from' is after 'to'; swap them", not "0 results"."""
    out = run("search", "--config", config_path(built_config), "--from", "2020-01-01",
              "--to", "2010", "parsing")  # fmt: skip
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == "papersift: error: --from is after --to; swap them.\n"
    out = run("search", "--config", config_path(built_config), "--from", "2020-05",
              "--to", "2020", "parsing")  # fmt: skip
    assert out.returncode == 0, out.stderr  # May 2020 is within 2020


@pytest.mark.slow
def test_an_unknown_category_is_refused_as_the_web_refuses_it(built_config: Config) -> None:
    """It printed "note: no papers in category 'nonsense'" and 0 results, exit 0, after
    loading the model; the web answers 400. Case and archives are matched as the web does."""
    search = ("search", "--config", config_path(built_config), "--mode", "keyword")
    out = run(*search, "--category", "nonsense", "--category", "CS.cl", "language")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr == (
        "papersift: error: unknown category 'nonsense': no paper in this index has it; "
        "`papersift stats --json` lists the categories\n"
    )
    out = run(*search, "--json", "--category", "cs.XX", "--category", "nope", "language")
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.startswith("papersift: error: unknown categories 'cs.XX', 'nope': no ")
    out = run(*search, "--json", "--category", "CS.cl", "--category", "CMP-LG", "language")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["total"] > 0 and data["warnings"] == []
    assert all({"cs.CL", "cmp-lg"} & set(h["categories"]) for h in data["hits"])
    out = run(*search, "--json", "--category", "cs", "language")  # an archive: all cs.*
    assert out.returncode == 0 and json.loads(out.stdout)["total"] > 0, out.stderr


@pytest.mark.parametrize("port", ["99999", "0", "65536", "http"])
def test_serve_port_out_of_range_is_refused(port: str, fresh_config: Config) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "papersift", "serve", "--config", config_path(fresh_config),
         "--port", port],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 2
    assert f"argument --port: must be a port number from 1 to 65535: '{port}'" in out.stderr
    assert "Traceback" not in out.stderr and "Uvicorn running" not in out.stderr


def test_stats_says_what_to_do_and_no_time_to_go_when_nothing_embeds(
    fresh_config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    from papersift.cli import main
    from papersift.engine.datadir import DataDir
    from papersift.engine.embed_progress import record_progress
    from papersift.engine.writer_lock import writer_lock
    from papersift.indexer.build import embed_backlog, import_files
    from tests.corpus import sample_records

    argv = ["stats", "--config", str(fresh_config.base_dir / "config.toml")]
    DataDir(fresh_config).close()  # an empty data directory
    assert main(argv) == 0
    assert "published       no papers yet: `papersift import FILE...`" in capsys.readouterr().out
    data = DataDir(fresh_config)
    import_files(data, [write_jsonl(fresh_config.base_dir / "s.jsonl", sample_records(every=200))])
    record_progress(data.store, data.embedder.model_id, 2.5, None)  # a rate measured before
    data.close()
    assert main(argv) == 0
    idle = capsys.readouterr().out
    assert "embedding       0 of " in idle and "to go" not in idle  # no process embeds
    with writer_lock(fresh_config.data_dir, "`papersift index`"):
        assert main(argv) == 0
    assert "2.5 papers/s measured; about" in capsys.readouterr().out
    # Papers the store calls embedded whose vector files are all gone: stats says so.
    with DataDir(fresh_config) as data:
        assert embed_backlog(data, limit=3) == 3
    assert main(argv) == 0
    assert "vectors         none on disk" not in capsys.readouterr().out
    shutil.rmtree(fresh_config.data_dir / "vectors")
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "vectors         none on disk for those papers: run `papersift doctor`" in out


def test_empty_index_hints_name_the_bundled_demo(
    fresh_config: Config, capsys: pytest.CaptureFixture[str]
) -> None:
    """A new user with only the CLI: `search` on no index and `stats` on no papers give a
    file to import, the demo inside the installed package, and that command works."""
    import papersift
    from papersift.cli import main
    from papersift.engine.datadir import DataDir

    path = config_path(fresh_config)
    assert main(["search", "--config", path, "language"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("papersift: error: no index at ") and err.count("\n") == 1
    found = re.search(r"\(the bundled demo: `([^`]+)`\)$", err.strip())
    assert found, err
    command = shlex.split(found.group(1))
    demo = Path(papersift.__file__).parent / "data" / "corpus" / "arxiv-demo.jsonl.gz"
    assert command[:2] == ["papersift", "import"] and Path(command[2]) == demo
    assert demo.is_file()
    DataDir(fresh_config).close()  # an empty data directory
    assert main(["stats", "--config", path]) == 0
    published = [x for x in capsys.readouterr().out.splitlines() if x.startswith("published")]
    assert published == [
        "published       no papers yet: `papersift import FILE...` adds some "
        f"(the bundled demo: `{found.group(1)}`)"
    ]
    assert main([*command[1:], "--config", path, "--limit", "20", "--no-hint"]) == 0
    capsys.readouterr()
    assert main(["stats", "--config", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["papers"] == 20


def test_search_prints_titles_as_text_not_tex(fresh_config: Config, tmp_path: Path) -> None:
    """A title in TeX (accents, as arXiv writes them) reads as the pages show it."""
    record = next(r for r in demo_records() if r["id"] == "1309.1066")
    assert "visibilit\\'e" in record["title"]
    source = write_jsonl(tmp_path / "t.jsonl", [record])
    assert run("import", "--config", config_path(fresh_config), str(source)).returncode == 0
    out = run("search", "--config", config_path(fresh_config), "--mode", "keyword", "visibilite")
    assert out.returncode == 0, out.stderr
    assert "Statistiques et visibilité des bibliothèques numériques" in out.stdout, out.stdout


def test_stats_on_a_new_index_loads_no_model(
    small: Config,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With no vector stored yet, nothing knows the vectors' width: stats asked the model,
    which loaded it and built its graph into models/ (3.9 s), though it "loads no model"."""
    from papersift.cli import main

    cache = tmp_path / "graphs"  # empty: a model loaded now would build its graph here
    cache.mkdir()
    monkeypatch.setenv("PAPERSIFT_MODEL_CACHE", str(cache))
    assert main(["stats", "--json", "--config", config_path(small)]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["papers"] > 0 and out["embedded"] == 0 and out["dimension"] is None
    assert main(["stats", "--config", config_path(small)]) == 0
    assert "embedded        0 (0.0%)" in capsys.readouterr().out
    assert list(cache.iterdir()) == [] and not (small.data_dir / "models").exists()


def test_counts_read_as_written_thousands_separated_and_one_in_the_singular(
    fresh_config: Config, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stats printed "papers 2000" beside "2,000 of 2,000 papers"; "1 records read"."""
    from papersift.cli import main
    from papersift.core.resources import demo_corpus_path
    from tests.corpus import make_config

    cfg = config_path(fresh_config)
    assert main(["import", "--config", cfg, str(demo_corpus_path()), "--limit", "1100",
                 "--no-hint"]) == 0  # fmt: skip
    assert capsys.readouterr().out.startswith("1,100 records read: 1,")
    assert main(["stats", "--config", cfg]) == 0
    lines = dict(line.split(None, 1) for line in capsys.readouterr().out.splitlines())
    papers = lines["papers"].strip()
    assert re.fullmatch(r"1,\d{3}", papers), papers
    assert lines["embedding"].strip().startswith(f"0 of {papers} papers")
    assert lines["researchers"].strip().startswith(f"{papers} papers not yet clustered")
    assert re.search(r"^cs\.DL 1,\d{3}, ", lines["top"].removeprefix("categories").strip())

    (tmp_path / "one").mkdir()
    one = make_config(tmp_path / "one")  # a data directory with one paper
    source = write_jsonl(tmp_path / "one.jsonl", demo_records()[:1])
    assert main(["import", "--config", config_path(one), str(source), "--no-hint"]) == 0
    assert capsys.readouterr().out == "1 record read: 1 added, 0 updated, 0 unchanged, 0 skipped\n"
    assert main(["stats", "--config", config_path(one)]) == 0
    assert "researchers     1 paper not yet clustered" in capsys.readouterr().out
