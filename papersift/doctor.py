"""``papersift doctor``: check config, data directory, index agreement, model and disk.

Every check reads only (it is safe next to a running server) and returns one
:class:`Check` line: OK, WARN or FAIL, what was found and what to do about it. ``repair``
does the two repairs that are safe to redo: rebuild the lexical index from the store and
forget embeddings whose vector files are gone (so ``papersift index`` embeds them again).
"""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np

from engine.datadir import MANIFEST, SCHEMA_VERSION, read_manifest
from papersift.config import Config
from papersift.errors import PapersiftError

Status = Literal["OK", "WARN", "FAIL"]
MIN_FREE = 256 * 2**20  # below this a commit or a merge can fail half-way
EMBED_RATE = 30.0  # papers/s measured on 2 cores (NOTES.md), for the backlog estimate
REBUILD = "stop the server, then run `papersift doctor --fix` (rebuilds it from the store)"


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def json(self) -> dict[str, str]:
        return asdict(self)


@dataclass
class _Store:
    papers: int
    seq: int
    lexical_seq: int
    docids: tuple[int, int, int]  # sum, min, max


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def config_check(path: str | None) -> Check:
    where = path or "defaults (no config file)"
    return Check("config", "OK", f"{where} parses")


def diagnose(config: Config) -> list[Check]:
    """All checks of one data directory; a failed prerequisite skips what depends on it."""
    root = config.data_dir
    out: list[Check] = []
    if not root.is_dir():
        out.append(
            Check(
                "data directory",
                "FAIL",
                f"{root} does not exist",
                "run `papersift import FILE...` (or `papersift serve`, which imports "
                "[data] bootstrap) to create it, or fix [data] dir / PAPERSIFT_DATA_DIR",
            )
        )
        return out
    out.append(_writable(root))
    out.append(_disk(root))
    manifest_check, manifest = _manifest(root)
    out.append(manifest_check)
    if manifest_check.status == "FAIL":
        return out
    store_check, store = _store(root)
    out.append(store_check)
    if store is not None:
        out.append(_lexical(config, root, store))
    model_check, model = _model(config, root, manifest)
    out.append(model_check)
    if store is not None and model is not None:
        out.extend(_vectors(root, *model, store.papers))
    return out


def _writable(root: Path) -> Check:
    try:
        with tempfile.NamedTemporaryFile(dir=root, prefix=".doctor-"):
            pass
    except OSError as exc:
        return Check(
            "data directory",
            "FAIL",
            f"{root} is not writable ({exc.strerror})",
            f"give the user running papersift write access: chown -R USER {root}",
        )
    return Check("data directory", "OK", f"{root} exists and is writable")


def _disk(root: Path) -> Check:
    free = shutil.disk_usage(root).free
    used = _size(root)
    detail = f"{_gib(free)} free, data directory uses {_gib(used)}"
    if free < MIN_FREE:
        return Check("free disk", "FAIL", detail, "free disk space or move [data] dir")
    # Tantivy merges and vector compaction rewrite files before deleting the old ones.
    if free < used:
        return Check(
            "free disk",
            "WARN",
            detail + " (merges need room for a second copy)",
            "free at least as much space as the data directory uses",
        )
    return Check("free disk", "OK", detail)


def _manifest(root: Path) -> tuple[Check, dict[str, Any]]:
    rebuild = (
        f"move {root} aside (or point PAPERSIFT_DATA_DIR at a new folder) and rebuild: "
        "`papersift import FILE...` then `papersift index` (docs/OPERATIONS.md)"
    )
    try:
        manifest = read_manifest(root)
    except PapersiftError as exc:
        return Check("manifest", "FAIL", str(exc).split("; ")[0], rebuild), {}
    if manifest is None:
        return Check("manifest", "FAIL", f"no {MANIFEST} in {root}", rebuild), {}
    version = manifest.get("schema_version")
    if version != SCHEMA_VERSION:
        return Check(
            "manifest",
            "FAIL",
            f"index schema version {version}, this build reads version {SCHEMA_VERSION}",
            rebuild,
        ), manifest
    built = manifest.get("papersift_version", "?")
    return Check("manifest", "OK", f"schema version {version} (written by {built})"), manifest


def _connect(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{root / 'papers.sqlite'}?mode=ro", uri=True)


def _store(root: Path) -> tuple[Check, _Store | None]:
    path = root / "papers.sqlite"
    if not path.is_file():
        return Check(
            "store",
            "FAIL",
            f"{path} is missing",
            "restore the data directory from a backup, or rebuild it",
        ), None
    try:
        db = _connect(root)
        try:
            db.execute("PRAGMA busy_timeout = 10000")
            papers, total, low, high = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(docid), 0), COALESCE(MIN(docid), 0), "
                "COALESCE(MAX(docid), 0) FROM papers"
            ).fetchone()
            meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        finally:
            db.close()
    except sqlite3.Error as exc:
        return Check(
            "store",
            "FAIL",
            f"{path} cannot be read: {exc}",
            "restore the data directory from a backup",
        ), None
    store = _Store(
        papers,
        int(meta.get("seq", 0)),
        int(meta.get("lexical_seq", 0)),
        (int(total), int(low), int(high)),
    )
    return Check("store", "OK", f"{papers} papers, change sequence {store.seq}"), store


def _lexical(config: Config, root: Path, store: _Store) -> Check:
    from engine.lexical import LexicalIndex

    folder = root / "lexical"
    if not (folder / "meta.json").is_file():
        return Check("lexical index", "FAIL", f"{folder} is missing or empty", REBUILD)
    try:
        index = LexicalIndex(folder)
        searcher = index.index.searcher()
        import tantivy

        stats = searcher.aggregate(tantivy.Query.all_query(), {"d": {"stats": {"field": "docid"}}})
        d = stats["d"]
        docs = int(searcher.num_docs)
        found = (int(d["sum"] or 0), int(d["min"] or 0), int(d["max"] or 0)) if docs else (0, 0, 0)
    except Exception as exc:  # a corrupt or foreign index: report, do not crash the doctor
        return Check("lexical index", "FAIL", f"{folder} cannot be opened: {exc}", REBUILD)
    behind = store.seq - store.lexical_seq
    if docs == store.papers and found == store.docids:
        return Check("lexical index", "OK", f"{docs} documents, same docids as the store")
    detail = f"{docs} documents for {store.papers} papers"
    if behind > 0:
        return Check(
            "lexical index",
            "WARN",
            f"{detail}; {behind} store changes not yet applied",
            "none needed: the next `papersift serve`, `index` or `reindex` replays them",
        )
    return Check("lexical index", "FAIL", f"{detail} (docids differ)", REBUILD)


def _model(
    config: Config, root: Path, manifest: dict[str, Any]
) -> tuple[Check, tuple[str, int] | None]:
    from engine.embed import Embedder, default_model_path, default_tokenizer_path

    e = config.embedding
    # The same resolution as DataDir.embedder (which cannot be used without opening the index).
    model = Path(e.model).expanduser() if e.model else default_model_path()
    tok = Path(e.tokenizer).expanduser() if e.tokenizer else default_tokenizer_path()
    if e.model and not model.is_absolute():
        model = config.base_dir / model
    if e.tokenizer and not tok.is_absolute():
        tok = config.base_dir / tok
    fix = "set [embedding] model and tokenizer to an ONNX model and its tokenizer.json"
    if e.model and not e.tokenizer:
        return Check("model", "FAIL", "[embedding] model is set without tokenizer", fix), None
    cache = root / "models"
    try:
        emb = Embedder(
            model,
            tok,
            max_length=e.max_length,
            batch_size=1,
            cache_dir=cache if e.float32_cache and cache.is_dir() else None,
            model_id=e.model_id or None,
        )
        emb.embed(["papersift doctor"])
    except Exception as exc:
        return Check("model", "FAIL", f"cannot load the embedding model: {exc}", fix), None
    detail = f"{emb.model_id} loads (dimension {emb.dim})"
    built_id, built_dim = manifest.get("model_id"), manifest.get("dimension")
    if built_id is not None and built_id != emb.model_id:
        return Check(
            "model",
            "WARN",
            f"{detail}, but the manifest records vectors of {built_id}",
            "semantic search needs vectors of the configured model: "
            "run `papersift index` (about 30 papers/s) or configure the old model "
            "again",
        ), (emb.model_id, emb.dim)
    if built_id == emb.model_id and built_dim not in (None, emb.dim):
        return Check(
            "model",
            "FAIL",
            f"{detail}, but the manifest says dimension {built_dim}",
            "set [embedding] model_id to a new name and run `papersift index`",
        ), None
    return Check("model", "OK", detail), (emb.model_id, emb.dim)


def _vectors(root: Path, model_id: str, dim: int, papers: int) -> list[Check]:
    from engine.vectors import model_dir_name

    db = _connect(root)
    try:
        db.execute("PRAGMA busy_timeout = 10000")
        current = dict(db.execute("SELECT docid, text_hash FROM papers").fetchall())
        marked = {
            int(d)
            for (d,) in db.execute(
                "SELECT e.docid FROM embedded e JOIN papers p USING (docid) "
                "WHERE e.model = ? AND e.text_hash = p.text_hash",
                (model_id,),
            )
        }
    finally:
        db.close()
    live, bad_dim = _segment_docids(root, model_id, dim, current)
    folder = root / "vectors" / model_dir_name(model_id)
    out = []
    pending = papers - len(marked)
    coverage = f"{len(marked)} of {papers} papers embedded"
    if pending:
        hours = pending / EMBED_RATE / 3600
        out.append(
            Check(
                "embeddings",
                "WARN",
                f"{coverage}; {pending} wait (about {hours:.1f} h at {EMBED_RATE:.0f} papers/s)",
                "run `papersift index` or let the [schedule] embed job of `papersift serve` do it",
            )
        )
    else:
        out.append(Check("embeddings", "OK", coverage))
    lost = len(marked - live)
    if bad_dim or lost:
        out.append(
            Check(
                "vectors",
                "FAIL",
                f"{lost} embedded papers have no vector file, "
                f"{bad_dim} unreadable segments in {folder}",
                "stop the server, run `papersift doctor --fix`, then `papersift index`",
            )
        )
    else:
        extra = len(live - marked)  # written but not yet recorded: normal during embedding
        note = f" (+{extra} not yet recorded)" if extra else ""
        out.append(Check("vectors", "OK", f"{len(live & marked)} vectors match the store{note}"))
    return out


def _segment_docids(
    root: Path, model_id: str, dim: int, current: dict[int, str]
) -> tuple[set[int], int]:
    """Docids with a vector of their current text in some segment; unreadable segments."""
    from engine.vectors import VectorIndex, model_dir_name

    live: set[int] = set()
    bad = 0
    for seg in VectorIndex(root / "vectors" / model_dir_name(model_id), dim).segments():
        try:
            with np.load(seg, allow_pickle=False) as z:  # reads only the arrays asked for
                ids, hashes, shape = z["docids"], z["hashes"], z["vectors"].shape
        except (OSError, ValueError, KeyError):
            bad += 1
            continue
        if len(shape) != 2 or shape[1] != dim:
            bad += 1
            continue
        live.update(int(d) for d, h in zip(ids, hashes, strict=True) if current.get(int(d)) == h)
    return live, bad


def repair(config: Config, say: Callable[[str], None] = print) -> None:
    """Rebuild the lexical index from the store if it disagrees; forget embeddings whose
    vectors are gone. Run with the server stopped (it takes the index writer)."""
    from engine.datadir import DataDir

    checks = {c.name: c for c in diagnose(config)}
    root = config.data_dir
    if checks.get("lexical index", Check("", "OK", "")).status == "FAIL":
        shutil.rmtree(root / "lexical", ignore_errors=True)
        data = DataDir(config, create=False)
        try:
            data.store.set_meta("lexical_seq", "0")  # replay every paper into a new index
            n = data.sync_lexical()
            data.lexical.close_writer()
        finally:
            data.close()
        say(f"rebuilt the lexical index from the store ({n} changes replayed)")
    if checks.get("vectors", Check("", "OK", "")).status == "FAIL":
        data = DataDir(config, create=False)
        try:
            model, dim = data.embedder.model_id, data.embedder.dim
            with data.store.reading() as db:
                current = dict(db.execute("SELECT docid, text_hash FROM papers").fetchall())
            live, _ = _segment_docids(root, model, dim, current)
            with data.store.transaction() as db:
                rows = [
                    d for (d,) in db.execute("SELECT docid FROM embedded WHERE model = ?", (model,))
                ]
                gone = [d for d in rows if d not in live]
                db.executemany(
                    "DELETE FROM embedded WHERE model = ? AND docid = ?", [(model, d) for d in gone]
                )
            data.write_manifest()
        finally:
            data.close()
        say(f"forgot {len(gone)} embeddings without vectors; run `papersift index`")


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
