"""Category names (core.taxonomy): every category real arXiv records carry has one."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from papersift.core.resources import demo_corpus_path
from papersift.core.taxonomy import ARCHIVES, CATEGORIES, LEGACY, category_name
from papersift.indexer.snapshot import open_text, read_snapshot, record_to_paper

ROOT = Path(__file__).resolve().parents[1]
BENCH = Path("data") / "arxiv" / "arxiv-snapshot-bench.jsonl.xz"
# shared/ sits beside the clone (CI, /work/main); a worktree elsewhere finds it at /work.
SHARED = (ROOT.parent / "shared", Path("/work/shared"))


def _unnamed(categories: set[str]) -> list[str]:
    return sorted(c for c in categories if category_name(c) == c)


def test_every_category_of_the_demo_corpus_has_a_name() -> None:
    found = {c for paper in read_snapshot(demo_corpus_path()) for c in paper.categories}
    assert {"cmp-lg", "cs.CL", "physics.soc-ph", "q-bio.QM"} <= found
    assert _unnamed(found) == []


def test_every_category_of_the_bench_snapshot_head_has_a_name() -> None:
    """The first 5,000 records of the benchmark snapshot: 1990s physics and mathematics,
    retired archives (alg-geom, chao-dyn, ...) among them."""
    path = next((s / BENCH for s in SHARED if (s / BENCH).is_file()), None)
    if path is None:
        pytest.skip(f"{BENCH} is not in shared/ here")
    with open_text(path) as fh:
        found = {
            c
            for line in itertools.islice(fh, 5000)
            for c in record_to_paper(json.loads(line)).categories
        }
    assert {"alg-geom", "math.AG", "nlin.AO", "cond-mat.stat-mech", "physics.optics"} <= found
    assert len(found) > 90
    assert _unnamed(found) == []


def test_names_tell_categories_apart() -> None:
    """No two codes show one name: an alias (math.IT of cs.IT) or a shared field name
    (stat.ML and cs.LG) says whose it is, and a retired archive names its successor."""
    codes = [*ARCHIVES, *CATEGORIES, *LEGACY]
    names = [category_name(c) for c in codes]
    assert len(set(names)) == len(codes)
    assert category_name("alg-geom") == "Algebraic Geometry (legacy archive, now math.AG)"
    assert category_name("math.AG") == "Algebraic Geometry"
    assert category_name("cs.LG") == "Machine Learning"
    assert category_name("stat.ML") == "Machine Learning (Statistics)"
    assert category_name("astro-ph") == "Astrophysics"  # an old paper's category
    assert category_name("cs.XX") == "cs.XX"


def test_the_reader_keeps_exactly_the_archives_the_taxonomy_names() -> None:
    """The snapshot reader tells categories from MSC/ACM codes by archive: one list."""
    for archive in [*ARCHIVES, *LEGACY]:
        code = archive if archive in LEGACY else f"{archive}.XY"
        record = {"id": "0704.0001", "title": "t", "abstract": "a", "authors": "A. B",
                  "categories": f"{code} 68T05 H.3.3", "update_date": "2007-04-02"}  # fmt: skip
        assert record_to_paper(record).categories == (code,)
