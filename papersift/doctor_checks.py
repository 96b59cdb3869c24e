"""The checks of ``papersift doctor``: each reads only and returns one :class:`Check`.

Safe next to a running server: SQLite is opened read-only, the indexes are only searched.
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from papersift.core.config import Config, LabConfig
from papersift.core.errors import WRITE_ACCESS, ConfigError, PapersiftError, unwritable
from papersift.core.wording import counted
from papersift.engine.datadir import LEXICAL_REBUILD_FROM, MANIFEST, SCHEMA_VERSION, read_manifest
from papersift.engine.lexical import REBUILD
from papersift.engine.store_files import (
    STORE_FILE,
    StoreFacts,
    StoreUnreadable,
    identity_backlog,
    read_only,
    store_facts,
)

Status = Literal["OK", "WARN", "FAIL"]
MIN_FREE = 256 * 2**20  # below this a commit or a merge can fail half-way


@dataclass(frozen=True)
class Check:
    name: str
    status: Status
    detail: str
    fix: str = ""

    def json(self) -> dict[str, str]:
        return asdict(self)


def _gib(n: float) -> str:
    return f"{n / 2**30:.1f} GiB"


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def check_writable(root: Path) -> Check:
    reason = unwritable(root)
    if reason is not None:
        detail = f"{root} is not writable ({reason})"
        return Check("data directory", "FAIL", detail, WRITE_ACCESS.format(root=root))
    return Check("data directory", "OK", f"{root} exists and is writable")


def check_disk(root: Path) -> Check:
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


def check_manifest(root: Path) -> tuple[Check, dict[str, Any]]:
    rebuild = (
        f"move {root} aside (or point PAPERSIFT_DATA_DIR at a new folder) and rebuild: "
        "`papersift import FILE...` then `papersift index` (docs/OPERATIONS.md)"
    )
    # The manifest is small and versioned; what it describes may be intact: a backup's copy
    # comes first, before a rebuild that embeds every paper again (a day at arXiv's size).
    restore = (
        f"copy {MANIFEST} from the latest backup (`papersift backup` keeps one) into {root}; "
        f"without one, {rebuild}"
    )
    try:
        manifest = read_manifest(root)
    except PapersiftError as exc:
        return Check("manifest", "FAIL", str(exc).split("; ")[0], restore), {}
    if manifest is None:
        return Check("manifest", "FAIL", f"no {MANIFEST} in {root}", rebuild), {}
    version = manifest.get("schema_version")
    if version in LEXICAL_REBUILD_FROM:
        return Check(
            "manifest",
            "WARN",
            f"index schema version {version}: the keyword index is rebuilt from the store "
            f"for version {SCHEMA_VERSION} the next time the data directory is opened",
            "run `papersift index` once (or start `serve`)",
        ), manifest
    if isinstance(version, int) and version > SCHEMA_VERSION:
        return Check(
            "manifest",
            "FAIL",
            f"index schema version {version}, written by a newer papersift; this build "
            f"reads version {SCHEMA_VERSION}",
            "run the papersift that wrote it, or restore a backup this version made",
        ), manifest
    if version != SCHEMA_VERSION:
        return Check(
            "manifest",
            "FAIL",
            f"index schema version {version}, this build reads version {SCHEMA_VERSION}",
            rebuild,
        ), manifest
    built = manifest.get("papersift_version", "?")
    return Check("manifest", "OK", f"schema version {version} (written by {built})"), manifest


def check_store(root: Path) -> tuple[Check, StoreFacts | None]:
    path = root / STORE_FILE
    if not path.is_file():
        return Check(
            "store",
            "FAIL",
            f"{path} is missing",
            "restore the data directory from a backup, or rebuild it",
        ), None
    try:
        store = store_facts(root)
    except StoreUnreadable as exc:
        return store_unreadable(root, exc), None
    return Check(
        "store", "OK", f"{counted(store.papers, 'paper')}, change sequence {store.seq}"
    ), store


def store_unreadable(root: Path, exc: StoreUnreadable) -> Check:
    """The store's FAIL row: the folder is not writable (SQLite reads a store in WAL mode
    only where it can write its shared memory), or the file is damaged."""
    path = root / STORE_FILE
    reason = unwritable(root)
    if reason is not None:
        detail = f"{path} cannot be read while {root} is not writable ({reason}): {exc}"
        return Check("store", "FAIL", detail, WRITE_ACCESS.format(root=root))
    return Check(
        "store",
        "FAIL",
        f"{path} cannot be read: {exc}",
        "restore the data directory from a backup, or rebuild it",
    )


def check_researchers(root: Path, store: StoreFacts) -> Check:
    """Papers an import left for the backlog's identity clustering (``papersift index``)."""
    pending = identity_backlog(root)  # StoreUnreadable: the store's row says it (diagnose)
    if pending:
        return Check(
            "researchers",
            "WARN",
            f"{pending:,} of {counted(store.papers, 'paper')} not yet clustered into researchers",
            "run `papersift index` or let the [schedule] embed job of `papersift serve` do it",
        )
    return Check("researchers", "OK", "researcher identities are up to date")


def check_lab(lab: LabConfig, root: Path) -> Check:
    """Declared ``[lab] members`` that no paper was anchored on, and why (``indexer.lab``)."""
    from papersift.indexer.lab_report import unlinked_members

    with read_only(root) as db:  # StoreUnreadable: the store's row says it (diagnose)
        missing = unlinked_members(db, lab)
    if not missing:
        return Check("lab members", "OK", f"all {len(lab.members)} linked to their papers")
    detail = "; ".join(f"{m.name} ({m.orcid}) has no papers: {m.reason}" for m in missing)
    fixes = dict.fromkeys(f"{m.name}: {m.fix}" for m in missing)
    return Check("lab members", "WARN", detail, "; ".join(fixes))


def check_lexical(config: Config, root: Path, store: StoreFacts) -> Check:
    from papersift.engine.lexical import LexicalIndex

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
        reason = str(exc).removesuffix(f"; {REBUILD}")  # the engine's error ends in the fix
        return Check("lexical index", "FAIL", f"{folder} cannot be opened: {reason}", REBUILD)
    behind = store.seq - store.lexical_seq
    if docs == store.papers and found == store.docids:
        detail = f"{counted(docs, 'document')}, same docids as the store{_segments_note(folder)}"
        return Check("lexical index", "OK", detail)
    detail = f"{counted(docs, 'document')} for {counted(store.papers, 'paper')}"
    if behind > 0:
        return Check(
            "lexical index",
            "WARN",
            f"{detail}; {counted(behind, 'store change')} not yet applied",
            "none needed: the next `papersift serve`, `index` or `reindex` replays them",
        )
    return Check("lexical index", "FAIL", f"{detail} (docids differ)", REBUILD)


def _segments_note(folder: Path) -> str:
    """How many segments the index is in, and whether a rewrite would pay."""
    from papersift.engine.lexical_rewrite import scattered, segment_sizes

    sizes = segment_sizes(folder)
    if len(sizes) <= 1:
        return ""
    note = f", in {len(sizes)} segments"
    if scattered(sizes):
        note += " (`papersift reindex` writes them as one; searches then cost ~10% less CPU)"
    return note


def check_model(
    config: Config, root: Path, manifest: dict[str, Any]
) -> tuple[Check, tuple[str, int] | None]:
    from papersift.engine.embed import Embedder
    from papersift.engine.model_files import ModelSpec
    from papersift.engine.model_graphs import graph_cache_dir

    e = config.embedding
    fix = "set [embedding] model and tokenizer to an ONNX model and its tokenizer.json"
    try:
        spec = ModelSpec.of(config)  # the same spec (files, int8 or not) DataDir embeds with
    except ConfigError as exc:
        return Check("model", "FAIL", str(exc), fix), None
    model, tok = spec.paths()
    cache = graph_cache_dir(root)
    cache_dir = cache if e.float32_cache or spec.quantize else None
    note = ""
    try:
        # The configured embedder gives the model id vectors and progress are kept under;
        # constructing it only hashes the files.
        emb = Embedder(
            model,
            tok,
            max_length=spec.max_length,
            batch_size=1,
            cache_dir=cache_dir,
            model_id=spec.model_id or None,
            providers=e.providers.split(","),
            quantize=spec.quantize,
            query_int8=e.query_int8,
        )
        if cache_dir is None or cache.is_dir():
            emb.embed(["papersift doctor"])
            if emb.query_graph_path != emb.graph_path:
                note = "; queries are embedded in int8 (`[embedding] query_int8`)"
            elif e.query_int8:
                note = ("; queries are embedded in float32: the int8 query graph is not "
                        "cheaper on this CPU (`[embedding] query_int8`)")  # fmt: skip
        else:
            # No graph cache yet (nothing embedded here): load the source graph to prove the
            # files work, without writing the optimised graphs into the data directory.
            plain = Embedder(model, tok, max_length=spec.max_length, batch_size=1,
                             providers=e.providers.split(","))  # fmt: skip
            plain.embed(["papersift doctor"])
            emb.expect_dim(plain.dim)
            note = "; its optimised graph is built by the first `papersift index`"
    except Exception as exc:
        return Check("model", "FAIL", f"cannot load the embedding model: {exc}", fix), None
    detail = f"{emb.model_id} loads (dimension {emb.dim}){note}"
    built_id, built_dim = manifest.get("model_id"), manifest.get("dimension")
    if built_id is not None and built_id != emb.model_id:
        return Check(
            "model",
            "WARN",
            f"{detail}, but the manifest records vectors of {built_id}",
            "semantic search needs vectors of the configured model: "
            "run `papersift index` (about 29 papers/s) or configure the old model "
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
