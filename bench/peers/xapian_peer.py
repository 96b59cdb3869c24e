"""Xapian (Debian's python3-xapian, made importable from the venv): BM25 with title weight."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import CACHE
from bench.peers.base import Doc, Peer, Unavailable, Vectors

DEBIAN = Path("/usr/lib/python3/dist-packages/xapian")
SHIM = CACHE / "xapian-path"  # holds only a symlink to Debian's module, not all dist-packages


def _xapian() -> Any:
    try:
        import xapian  # type: ignore[import-not-found]
    except ImportError:
        if not DEBIAN.is_dir():
            raise Unavailable(
                "xapian: not installed (Debian: apt-get install python3-xapian)"
            ) from None
        SHIM.mkdir(parents=True, exist_ok=True)
        link = SHIM / "xapian"
        if not link.exists():
            link.symlink_to(DEBIAN)
        sys.path.append(str(SHIM))
        try:
            import xapian
        except ImportError as exc:  # built for another Python ABI
            raise Unavailable(f"xapian: Debian's module does not load here ({exc})") from None
    return xapian


class XapianPeer(Peer):
    name = "Xapian"
    note = (
        "Xapian's BM25Weight (defaults), English stemmer with STEM_SOME, title indexed with "
        "wdf 2 beside the abstract in one unprefixed text (its docs' way to weight a field), "
        "QueryParser with default operator OR."
    )

    @classmethod
    def check(cls) -> None:
        _xapian()

    @classmethod
    def version(cls) -> str:
        return f"xapian {_xapian().version_string()}"

    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None:
        x = _xapian()
        db = x.WritableDatabase(str(self.workdir / "db"), x.DB_CREATE_OR_OVERWRITE)
        tg = x.TermGenerator()
        tg.set_stemmer(x.Stem("en"))
        for d in docs:
            doc = x.Document()
            tg.set_document(doc)
            tg.index_text(d.title, 2)
            tg.increase_termpos()
            tg.index_text(d.abstract)
            doc.set_data(d.id)
            db.add_document(doc)
        db.commit()
        db.close()
        self.db = x.Database(str(self.workdir / "db"))
        self.qp = x.QueryParser()
        self.qp.set_stemmer(x.Stem("en"))
        self.qp.set_stemming_strategy(x.QueryParser.STEM_SOME)
        self.qp.set_default_op(x.Query.OP_OR)
        self.qp.set_database(self.db)
        self.enquire = x.Enquire(self.db)
        self.x = x

    def keyword(self, query: str, k: int) -> list[str]:
        try:
            q = self.qp.parse_query(query)
        except self.x.QueryParserError:
            q = self.qp.parse_query(query, 0)  # no operators: plain words
        self.enquire.set_query(q)
        return [m.document.get_data().decode() for m in self.enquire.get_mset(0, k)]

    def close(self) -> None:
        if hasattr(self, "db"):
            self.db.close()
