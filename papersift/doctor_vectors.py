"""The vector checks of ``papersift doctor``: the embedding backlog, whether every paper the
store calls embedded has its vector in a readable segment, and each vector graph; and which
segments ``doctor --fix`` moves aside (``QUARANTINE``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from papersift.core.wording import counted
from papersift.doctor_checks import Check
from papersift.engine.store_files import embedding_state

# Where ``doctor --fix`` moves files it cannot read, for a person to look at or delete.
QUARANTINE = "quarantine"
EMBED_RATE = 29.0  # papers/s on 2 cores (bench/RESULTS.md core section), for the backlog estimate


def check_vectors(root: Path, model_id: str, dim: int, papers: int) -> list[Check]:
    from papersift.engine.embed_progress import format_duration, parse_progress, progress_key
    from papersift.engine.vector_segments import model_dir_name

    current, marked, recorded = embedding_state(root, model_id, progress_key(model_id))
    progress = parse_progress(recorded, model_id, len(marked), papers)
    live, bad = segment_docids(root, model_id, dim, current)
    folder = root / "vectors" / model_dir_name(model_id)
    out = []
    pending = papers - len(marked)
    coverage = progress.line()
    if pending:
        if progress.rate is None:  # no run measured yet: the benchmark's figure
            coverage += f"; about {format_duration(pending / EMBED_RATE)} at {EMBED_RATE:.0f}"
            coverage += " papers/s (2 cores; no run here has measured a rate yet)"
        out.append(
            Check(
                "embeddings",
                "WARN",
                coverage,
                "run `papersift index` or let the [schedule] embed job of `papersift serve` do it",
            )
        )
    else:
        out.append(Check("embeddings", "OK", coverage))
    lost = len(marked - live)
    if bad or lost:
        names = ", ".join(p.name for p in bad[:3]) + (", ..." if len(bad) > 3 else "")
        unreadable = f" ({names})" if bad else ""
        out.append(
            Check(
                "vectors",
                "FAIL",
                f"{lost} embedded papers have no vector file, "
                f"{len(bad)} unreadable segments{unreadable} in {folder}",
                "stop the server and run `papersift doctor --fix` (it moves unreadable "
                f"segments to {root / QUARANTINE} and queues their papers again), then "
                "`papersift index`",
            )
        )
    else:
        extra = len(live - marked)  # written but not yet recorded: normal during embedding
        note = f" (+{extra} not yet recorded)" if extra else ""
        out.append(
            Check(
                "vectors",
                "OK",
                f"{counted(len(live & marked), 'vector')}, as the store records them{note}",
            )
        )
    return out


def check_graphs(root: Path, model_id: str) -> list[Check]:
    """Each vector graph, and whether it is built as compaction builds one now: graphs of
    before 2026-12-06 keep their vectors in float32 (1.7x the memory), those of before
    2026-12-04 were built narrower and find fewer of the nearest papers. One line per graph;
    none below ``[search] ann_above``, where search is exact."""
    from papersift.engine import ann
    from papersift.engine.vector_segments import model_dir_name

    folder = root / "vectors" / model_dir_name(model_id)
    out = []
    for path in sorted(folder.glob("seg-*.hnsw")):
        facts = ann.describe(path)
        if facts is None:
            out.append(
                Check("vector graph", "WARN", f"{path.name} is unreadable; search scans instead",
                      f"delete {path} and run `papersift reindex` (it builds the graph again)")
            )  # fmt: skip
            continue
        kind = "float16" if facts.float16 else "float32"
        detail = (
            f"{path.name}: {facts.rows:,} vectors in {kind}, efConstruction {facts.ef_construction}"
        )
        if facts.current:
            out.append(Check("vector graph", "OK", detail))
            continue
        why = [] if facts.float16 else ["its vectors take 1.7x the memory of float16's"]
        if facts.ef_construction < ann.EF_CONSTRUCTION:
            why.append("it finds fewer of the nearest papers than one built now")
        out.append(
            Check(
                "vector graph", "WARN", f"{detail}: built before 2026-12-06; " + "; ".join(why),
                f"stop the server, delete {path} and run `papersift reindex` (it builds the "
                "graph again: ~5 minutes for 663k papers on 2 cores)",
            )
        )  # fmt: skip
    return out


def segment_docids(
    root: Path, model_id: str, dim: int, current: dict[int, str]
) -> tuple[set[int], list[Path]]:
    """Docids with a vector of their current text in some segment; the segments that cannot
    be read (damaged, foreign, or of another dimension)."""
    from papersift.engine.vector_segments import model_dir_name
    from papersift.engine.vectors import VectorIndex

    live: set[int] = set()
    bad: list[Path] = []
    for seg in VectorIndex(root / "vectors" / model_dir_name(model_id), dim).segments():
        try:
            with np.load(seg, allow_pickle=False) as z:  # reads only the arrays asked for
                ids, hashes, shape = z["docids"], z["hashes"], z["vectors"].shape
        # A truncated or overwritten file fails in zipfile or numpy, in any of these ways.
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
            bad.append(seg)
            continue
        if len(shape) != 2 or shape[1] != dim or len(ids) != len(hashes):
            bad.append(seg)
            continue
        live.update(int(d) for d, h in zip(ids, hashes, strict=True) if current.get(int(d)) == h)
    return live, bad
