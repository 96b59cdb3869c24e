"""SQLite FTS5 (Python's stdlib sqlite3): BM25 over title and abstract columns."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from bench.peers.base import Doc, Peer, Vectors, words


class SqliteFts5(Peer):
    name = "SQLite FTS5"
    note = (
        "FTS5 table (title, abstract), `porter unicode61` tokenizer (English stemming); ranked "
        "by `bm25()` with column weights 2:1 set as the table's `rank` (FTS5 docs: ORDER BY "
        "rank is the fast path); query words OR-ed, each quoted. `bm25()` scores every match "
        "before the top k are kept."
    )

    @classmethod
    def version(cls) -> str:
        return f"sqlite {sqlite3.sqlite_version}"

    @classmethod
    def check(cls) -> None:
        con = sqlite3.connect(":memory:")
        try:
            con.execute("CREATE VIRTUAL TABLE t USING fts5(x)")
        finally:
            con.close()

    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None:
        self.db = sqlite3.connect(self.workdir / "fts.sqlite", check_same_thread=False)
        self.db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5(id UNINDEXED, title, abstract, "
            "tokenize='porter unicode61')"
        )
        self.db.execute("INSERT INTO docs(docs, rank) VALUES('rank', 'bm25(0.0, 2.0, 1.0)')")
        self.db.executemany(
            "INSERT INTO docs(id, title, abstract) VALUES (?, ?, ?)",
            ((d.id, d.title, d.abstract) for d in docs),
        )
        self.db.execute("INSERT INTO docs(docs) VALUES('optimize')")
        self.db.commit()

    def keyword(self, query: str, k: int) -> list[str]:
        terms = [f'"{w}"' for w in words(query)]
        if not terms:
            return []
        rows = self.db.execute(
            "SELECT id FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT ?", (" OR ".join(terms), k)
        ).fetchall()
        return [str(r[0]) for r in rows]

    def close(self) -> None:
        if hasattr(self, "db"):
            self.db.close()
