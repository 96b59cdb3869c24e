"""bm25s (+ PyStemmer): sparse-matrix BM25 in numpy over one concatenated field."""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata
from typing import Any

from bench.peers.base import Doc, Peer, Unavailable, Vectors


class Bm25sPeer(Peer):
    name = "bm25s"
    note = (
        "`bm25s.BM25()` (Lucene BM25 variant, k1 1.5, b 0.75), `bm25s.tokenize` with English "
        "stop words and PyStemmer's English stemmer, as its README shows; title and abstract "
        "concatenated into one field (no field weights); numpy backend."
    )

    @classmethod
    def check(cls) -> None:
        try:
            import bm25s  # type: ignore[import-untyped]  # noqa: F401
            import Stemmer  # type: ignore[import-not-found]  # noqa: F401
        except ImportError as exc:
            raise Unavailable(f"bm25s: {exc} (pip install bm25s PyStemmer)") from None

    @classmethod
    def version(cls) -> str:
        return f"bm25s {metadata.version('bm25s')}"

    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None:
        import bm25s
        import Stemmer

        self.bm25s: Any = bm25s
        self.stemmer = Stemmer.Stemmer("english")
        self.ids = [d.id for d in docs]
        tokens = bm25s.tokenize(
            [f"{d.title}. {d.abstract}" for d in docs],
            stopwords="en",
            stemmer=self.stemmer,
            show_progress=False,
        )
        self.retriever = bm25s.BM25()
        self.retriever.index(tokens, show_progress=False)
        self.retriever.save(str(self.workdir / "index"))

    def keyword(self, query: str, k: int) -> list[str]:
        tokens = self.bm25s.tokenize(
            [query], stopwords="en", stemmer=self.stemmer, show_progress=False
        )
        if not tokens.ids[0]:
            return []
        k = min(k, len(self.ids))
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [self.ids[int(i)] for i, s in zip(docs[0], scores[0], strict=True) if s > 0]
