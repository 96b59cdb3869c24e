"""A data directory the commands cannot use as it is: read-only, a file, or not there yet.
Each is one line naming it and what to do, never a traceback or advice for another
problem, and a command that fails leaves nothing behind (found by a review of the CLI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from papersift.cli import main
from papersift.core.config import Config
from tests.corpus import demo_records, make_config, write_jsonl

Run = Callable[..., subprocess.CompletedProcess[str]]
# Mounts the folder $0 on itself read-only (in the private mount namespace of `unshare`),
# then runs the command: how a reviewer found these, and what stops root as chmod cannot.
READ_ONLY_MOUNT = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" "$0" && exec "$@"'


def _cli(prefix: list[str], config: Config) -> Run:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [*prefix, sys.executable, "-m", "papersift", *args]
        argv += ["--config", str(config.base_dir / "config.toml")]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    return run


@pytest.fixture
def read_only(small: Config) -> Iterator[Run]:
    """Runs ``papersift ARGS --config`` with ``small``'s data directory read-only."""
    root = small.data_dir
    if os.geteuid() != 0:
        root.chmod(0o555)
        try:
            yield _cli([], small)
        finally:
            root.chmod(0o755)
        return
    prefix = ["unshare", "--mount", "sh", "-c", READ_ONLY_MOUNT, str(root)]
    probe = shutil.which("unshare") and subprocess.run(
        [*prefix, "touch", str(root / "probe")], capture_output=True, text=True
    )
    if not probe or "Read-only file system" not in probe.stderr:
        pytest.skip("running as root, whom chmod does not stop, and a read-only bind mount "
                    f"(unshare --mount) is not allowed here: {probe and probe.stderr}")  # fmt: skip
    yield _cli(prefix, small)


def one_line(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    (line,) = out.stderr.strip().splitlines()
    return line


@pytest.mark.slow
def test_a_read_only_data_directory_is_named_as_such(
    small: Config, read_only: Run, tmp_path: Path
) -> None:
    """Writers ended in an OSError on writer.lock or members.sqlite; readers and doctor's
    store row said to restore a backup; a failed backup left a partial copy that made the
    next one fail "destination exists and is not empty"."""
    root = small.data_dir
    expected = f"papersift: error: the data directory {root} is not writable ("
    dest = tmp_path / "copy"
    for args in (["index"], ["reindex"], ["user", "list"], ["stats"], ["search", "parsing"],
                 ["backup", str(dest)], ["backup", str(dest)]):  # fmt: skip
        line = one_line(read_only(*args))
        assert line.startswith(expected) and "write access" in line, (args, line)
        assert not dest.exists(), "a failed backup removes what it made"
    out = read_only("doctor", "--json")
    assert out.returncode == 1
    checks = {c["name"]: c for c in json.loads(out.stdout)["checks"]}
    assert checks["data directory"]["status"] == checks["store"]["status"] == "FAIL"
    assert "not writable" in checks["store"]["detail"]
    assert "write access" in checks["store"]["fix"] and "backup" not in checks["store"]["fix"]


def cli(config: Config, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main([*argv, "--config", str(config.base_dir / "config.toml")])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(
    "command", [["stats"], ["search", "parsing"], ["match-affiliation", "Harvard"], ["index"]]
)
def test_a_data_directory_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """They ended in NotADirectoryError."""
    config = make_config(tmp_path)
    config.data_dir.write_text("not a folder\n")
    code, err = cli(config, capsys, *command)
    assert code == 1
    assert err == (
        f"papersift: error: the data directory {config.data_dir} is a file, not a folder "
        "(set [data] dir in config.toml or PAPERSIFT_DATA_DIR)\n"
    )


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ("index", "no index at {root}; run `papersift import FILE...` first"),
        ("reindex", "no index at {root}; run `papersift import FILE...` first"),
        ("enrich 2401.10241", "no index at {root}; run `papersift import FILE...` first"),
        ("import /nonexistent.jsonl", "no such file: /nonexistent.jsonl"),
        ("import-ror /nonexistent.json", "no such file: /nonexistent.json"),
        ("harvest --from 2026-01-02 --until 2026-01-01", "--from is after --until; swap them"),
        ("add not-an-id", "not an arXiv id: 'not-an-id'"),
        ("match-affiliation Harvard", "no index at {root}; run `papersift import FILE...` first"),
        ("stats", "no index at {root}; run `papersift import FILE...` first"),
        ("search parsing", "no index at {root}; run `papersift import FILE...` first"),
        ("backup {dest}", "no papersift data directory at {root}"),
    ],
)
def test_a_failing_command_does_not_make_the_data_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str, says: str
) -> None:
    """Writers made it (with an empty writer.lock) before checking their arguments or that
    there was an index; match-affiliation made a whole empty store and exited 0, after
    which stats, search and doctor reported an index of 0 papers."""
    (tmp_path / "lab").mkdir()
    config = make_config(tmp_path / "lab")  # its data directory: lab/data, not made
    root, dest = config.data_dir, tmp_path / "copy"
    code, err = cli(config, capsys, *command.format(dest=dest).split())
    assert code == 1 and err.startswith("papersift: error: " + says.format(root=root)), err
    assert err.count("\n") == 1
    assert not root.exists() and not dest.exists()


def test_import_makes_the_data_directory_and_serve_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What must still make it: an import (and serve's first start, in test_serve_start)."""
    (tmp_path / "lab").mkdir()
    config = make_config(tmp_path / "lab")  # its data directory: lab/data, not made
    source = write_jsonl(tmp_path / "few.jsonl", demo_records()[:3])
    assert cli(config, capsys, "import", str(source), "--no-hint")[0] == 0
    assert main(["stats", "--json", "--config", str(config.base_dir / "config.toml")]) == 0
    assert json.loads(capsys.readouterr().out)["papers"] == 3


ROOT = Path(__file__).resolve().parent.parent


def _elsewhere(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``papersift ARGS`` run from ``cwd`` with no config named: no --config, none of our
    variables but ``env`` (this checkout's code all the same)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("PAPERSIFT_")}
    return subprocess.run(
        [sys.executable, "-m", "papersift", *args], cwd=cwd, capture_output=True, text=True,
        timeout=120, env={**clean, "PYTHONPATH": str(ROOT), **env},
    )  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("command", [["stats"], ["search", "parsing"]])
def test_no_index_in_the_default_data_directory_says_where_it_came_from(
    tmp_path: Path, command: list[str]
) -> None:
    """Run outside the folder of its config.toml, a command said "no index at
    ./papersift-data; run `papersift import FILE...` first", which made a second copy of
    the corpus; that directory is only the default, as no config file was found."""
    root = tmp_path / "papersift-data"
    line = one_line(_elsewhere(tmp_path, *command))
    assert line.startswith(
        f"papersift: error: no index at {root} (the default data directory: no config.toml "
        "here and PAPERSIFT_DATA_DIR is not set); use --config FILE or PAPERSIFT_DATA_DIR, or "
        "run `papersift import FILE...` to start one here (the bundled demo: `papersift import "
    ), line
    assert not root.exists()
    # Named by the variable or by a config file, it is the one meant: no such note.
    named = f"papersift: error: no index at {root}; run `papersift import FILE...` first"
    line = one_line(_elsewhere(tmp_path, *command, PAPERSIFT_DATA_DIR=str(root)))
    assert line.startswith(named), line
    (tmp_path / "config.toml").write_text("[search]\npage_size = 10\n")
    assert one_line(_elsewhere(tmp_path, *command)).startswith(named)
    assert not root.exists()
