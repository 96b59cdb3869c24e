"""What `pip install` and the Containerfile put on a machine: one import package, papersift."""

from __future__ import annotations

import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _package_folders() -> set[str]:
    """The repository's top-level folders the packages of pyproject.toml come from (the
    folders reached through papersift/'s symlinks, and papersift/ itself)."""
    packages = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    folders = set()
    for name in packages["packages"]:
        path = (ROOT / name.replace(".", "/")).resolve()
        folders.add(path.relative_to(ROOT).parts[0])
    return folders


def test_container_build_installs_like_the_documented_install() -> None:
    """The Containerfile copies every folder a package comes from and installs them with the
    same pip command as docs/OPERATIONS.md (hadolint checks the rest: `make lint`)."""
    lines = (ROOT / "Containerfile").read_text().splitlines()
    stages = [i for i, line in enumerate(lines) if line.startswith("FROM ")]
    assert len(stages) == 2, "multi-stage: build, then a small final image"
    build_stage = lines[stages[0] : stages[1]]
    copied = {line.split()[1] for line in build_stage if line.startswith("COPY ")}
    assert _package_folders() == {"papersift", "engine", "indexer", "server", "feeds"}
    assert _package_folders() <= copied
    assert {"pyproject.toml", "README.md"} <= {
        w for line in build_stage if line.startswith("COPY ") for w in line.split()[1:-1]
    }
    run = " ".join(line.strip(" \\") for line in build_stage if "pip install" in line)
    assert "pip install --no-cache-dir -c requirements.lock ." in run
    docs = (ROOT / "docs" / "OPERATIONS.md").read_text()
    assert "/opt/papersift/bin/pip install -c requirements.lock ." in docs


@pytest.mark.slow
def test_the_wheel_holds_one_top_level_package(tmp_path: Path) -> None:
    """Built as pip builds it: only papersift/ (with real files where the repo has
    symlinks, templates and static files included) and its dist-info."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("papersift-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    dist_info = wheel.name.split("-py")[0] + ".dist-info"
    assert {n.split("/")[0] for n in names} == {"papersift", dist_info}
    for module in ("engine/search.py", "indexer/build.py", "server/app.py", "feeds/rss.py",
                   "core/paper.py", "server/templates/base.html"):  # fmt: skip
        assert f"papersift/{module}" in names
