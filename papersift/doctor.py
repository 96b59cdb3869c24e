"""``papersift doctor``: run the checks in order, report them, and do the safe repairs.

The checks themselves are in :mod:`papersift.doctor_checks`; each reads only and returns one
:class:`Check` line (OK, WARN or FAIL, what was found, what to do). ``repair`` does the two
repairs that are safe to redo: rebuild the lexical index from the store and forget
embeddings whose vector files are gone (so ``papersift index`` embeds them again).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

from papersift.core.config import Config
from papersift.core.wording import counted
from papersift.doctor_checks import (
    Check,
    Status,
    check_disk,
    check_lab,
    check_lexical,
    check_manifest,
    check_model,
    check_researchers,
    check_store,
    check_writable,
    store_unreadable,
)
from papersift.doctor_vectors import QUARANTINE, check_graphs, check_vectors, segment_docids
from papersift.engine.datadir import LEXICAL_REBUILD_FROM
from papersift.engine.store_files import StoreUnreadable

__all__ = ["Check", "Status", "config_check", "diagnose", "ok", "repair", "table"]


def config_check(path: str | None, env: Mapping[str, str] | None = None) -> Check:
    """The config's row: which file parses, and which ``PAPERSIFT_*`` variables override
    it (names only: a variable may hold a secret)."""
    env = os.environ if env is None else env
    where = path or "defaults (no config file)"
    names = sorted(k for k in env if k.startswith("PAPERSIFT_") and k != "PAPERSIFT_CONFIG")
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    verb = "overrides" if len(names) == 1 else "override"
    overrides = f"; {counted(len(names), 'environment variable')} {verb} it ({shown})"
    return Check("config", "OK", f"{where} parses{overrides if names else ''}")


def diagnose(config: Config) -> list[Check]:
    """All checks of one data directory; a failed prerequisite skips what depends on it."""
    root = config.data_dir
    if root.exists() and not root.is_dir():
        detail = f"{root} is a file, not a folder"
        return [Check("data directory", "FAIL", detail, "fix [data] dir / PAPERSIFT_DATA_DIR")]
    if not root.is_dir():
        return [
            Check(
                "data directory",
                "FAIL",
                f"{root} does not exist",
                "run `papersift import FILE...` (or `papersift serve`, which imports "
                "[data] bootstrap) to create it, or fix [data] dir / PAPERSIFT_DATA_DIR",
            )
        ]
    out = [check_writable(root), check_disk(root)]
    manifest_check, manifest = check_manifest(root)
    out.append(manifest_check)
    if manifest_check.status == "FAIL":
        return out
    store_check, store = check_store(root)
    out.append(store_check)
    at = len(out) - 1
    try:
        # A keyword index of an older schema that the next open rebuilds (the manifest's
        # check says so) cannot be opened with this schema's fields: nothing to report.
        if store is not None and manifest.get("schema_version") not in LEXICAL_REBUILD_FROM:
            out.append(check_lexical(config, root, store))
        if store is not None:
            out.append(check_researchers(root, store))
            if config.lab.members:
                out.append(check_lab(config.lab, root))
    except StoreUnreadable as exc:  # damaged past the counts check_store reads
        out[at], store = store_unreadable(root, exc), None
    model_check, model = check_model(config, root, manifest)
    out.append(model_check)
    try:
        if store is not None and model is not None:
            out.extend(check_vectors(root, *model, store.papers))
    except StoreUnreadable as exc:
        out[at] = store_unreadable(root, exc)
    if model is not None:
        out.extend(check_graphs(root, model[0]))
    return out


def repair(config: Config, say: Callable[[str], None] = print) -> None:
    """Rebuild the lexical index from the store if it disagrees; forget embeddings whose
    vectors are gone. Run with the server stopped (it takes the index writer); holds the
    writer lock as every writer does, so it refuses, naming the holder, while one runs."""
    from papersift.engine.writer_lock import writer_lock

    root = config.data_dir
    if not root.is_dir():
        return  # nothing to repair (the checks say why), and nothing to create
    with writer_lock(root, "`papersift doctor --fix`"):
        _repair(config, {c.name: c for c in diagnose(config)}, say)


def _repair(config: Config, checks: dict[str, Check], say: Callable[[str], None]) -> None:
    from papersift.engine.datadir import DataDir

    root = config.data_dir

    def failed(name: str) -> bool:
        return name in checks and checks[name].status == "FAIL"

    for first in ("manifest", "store"):  # what the repairs rebuild from
        if failed(first):
            say(f"nothing repaired: the {first} must be fixed first (below)")
            return
    if failed("lexical index"):
        shutil.rmtree(root / "lexical", ignore_errors=True)
        with DataDir(config, create=False) as data:  # rebuilds an index that held commits
            n = data.store.count()
            if not data.lexical_rebuilt:
                data.reset_lexical()  # replay every paper into a new index
                n = data.sync_lexical()
                data.lexical.close_writer()
        say(f"rebuilt the lexical index from the store ({n} changes replayed)")
    if failed("vectors"):
        with DataDir(config, create=False) as data:
            model, dim = data.indexing_embedder.model_id, data.indexing_embedder.dim
            live, bad = segment_docids(root, model, dim, data.store.all_text_hashes())
            for path in bad:  # before anything reads the folder's segments
                say(f"moved unreadable {path.name} to {quarantine(root, path)}")
            gone = data.store.forget_embeddings(model, keep=live)
            data.write_manifest()
        say(f"forgot {len(gone)} embeddings without vectors; run `papersift index`")


def quarantine(root: Path, segment: Path) -> Path:
    """Move a segment (and its vector graph, which indexes it) into the data directory's
    quarantine folder, under its model's folder name; where it went."""
    from papersift.engine.ann import graph_path

    dest = root / QUARANTINE / segment.parent.name
    dest.mkdir(parents=True, exist_ok=True)
    for path in (segment, graph_path(segment)):
        if path.exists():
            target = dest / path.name
            n = 1
            while target.exists():  # one quarantined before under the same name
                target = dest / f"{path.name}.{n}"
                n += 1
            path.replace(target)
    return dest / segment.name


def ok(checks: list[Check]) -> bool:
    return all(c.status != "FAIL" for c in checks)


def table(checks: list[Check]) -> str:
    width = max(len(c.name) for c in checks)
    lines = []
    for c in checks:
        lines.append(f"{c.status:<4}  {c.name:<{width}}  {c.detail}")
        if c.fix and c.status != "OK":
            lines.append(f"{'':<4}  {'':<{width}}  -> {c.fix}")
    return "\n".join(lines)
