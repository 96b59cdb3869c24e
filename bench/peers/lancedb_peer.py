"""LanceDB (embedded): native BM25 full-text index, flat vector search, RRF hybrid."""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from bench.peers.base import Doc, Peer, Unavailable, Vectors

os.environ.setdefault("LANCEDB_LOG", "error")  # not a warning per query about score columns


class LanceDbPeer(Peer):
    name = "LanceDB"
    modes = ("keyword", "semantic", "hybrid")
    note = (
        "Embedded table (id, text = title + abstract, vector), native FTS index on `text` "
        "(`create_fts_index`, its defaults: English stemming, stop words, ASCII folding; one "
        "field, no title weight); vector search brute force with dot-product distance (no ANN "
        "index: exact, like ours up to 100k papers); hybrid = its default `RRFReranker` (k 60) "
        "over both."
    )

    @classmethod
    def check(cls) -> None:
        try:
            import lancedb  # noqa: F401
            import pyarrow  # type: ignore[import-untyped]  # noqa: F401
        except ImportError as exc:
            raise Unavailable(f"lancedb: {exc} (pip install lancedb)") from None

    @classmethod
    def version(cls) -> str:
        return f"lancedb {metadata.version('lancedb')}"

    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None:
        import lancedb
        import pyarrow as pa

        columns: dict[str, Any] = {
            "id": pa.array([d.id for d in docs], pa.string()),
            "text": pa.array([f"{d.title}. {d.abstract}" for d in docs], pa.string()),
        }
        if vectors is not None:
            flat = pa.array(vectors.reshape(-1), pa.float32())
            columns["vector"] = pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1])
        self.db = lancedb.connect(str(self.workdir / "db"))
        self.table: Any = self.db.create_table("papers", data=pa.table(columns), mode="overwrite")
        with warnings.catch_warnings():  # the sync API's documented call, deprecated in 0.25
            warnings.simplefilter("ignore", DeprecationWarning)
            self.table.create_fts_index("text", replace=True)
        self.has_vectors = vectors is not None

    def keyword(self, query: str, k: int) -> list[str]:
        q = " ".join(query.replace('"', " ").split())
        if not q:
            return []
        res = self.table.search(q, query_type="fts").select(["id"]).limit(k).to_arrow()
        return [str(x) for x in res.column("id").to_pylist()]

    def semantic(self, qvec: Vectors, k: int) -> list[str]:
        res = (
            self.table.search(qvec, query_type="vector")
            .distance_type("dot")
            .select(["id"])
            .limit(k)
            .to_arrow()
        )
        return [str(x) for x in res.column("id").to_pylist()]

    def hybrid(self, query: str, qvec: Vectors, k: int) -> list[str]:
        q = " ".join(query.replace('"', " ").split())
        res = (
            self.table.search(query_type="hybrid")
            .vector(qvec)
            .text(q)
            .distance_type("dot")
            .select(["id"])
            .limit(k)
            .to_arrow()
        )
        return [str(x) for x in res.column("id").to_pylist()]
