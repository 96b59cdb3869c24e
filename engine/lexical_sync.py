"""The keyword index kept consistent with the store: the store's changes replayed into
Tantivy after an import or a crash, commits recorded in the order that keeps a crash and a
backup consistent, and the index rewritten as one segment (``engine.datadir.DataDir``
inherits these)."""

from __future__ import annotations

import threading
from collections.abc import Mapping

from papersift.core.paper import Paper
from papersift.engine import lexical_rewrite
from papersift.engine.lexical import LexicalIndex
from papersift.engine.store import PaperStore


class LexicalSync:
    """How the keyword index follows the store (a mixin of ``DataDir``, whose store and
    index it uses)."""

    store: PaperStore
    lexical: LexicalIndex

    def sync_lexical(
        self, known: Mapping[int, Paper] | None = None, *, progress: bool = False
    ) -> int:
        """Index in Tantivy the store changes it has not absorbed (an import's new papers, or
        what a crash left out). ``known`` may hold current records of changed papers (saves
        decoding them again); returns the documents written or deleted. With nothing ever
        committed to Tantivy, every paper goes into one segment (with a bar if ``progress``)."""
        return self._replay_lexical(known or {}, progress)

    def lexical_empty(self) -> bool:
        """Whether nothing of the store has been committed to Tantivy yet."""
        return int(self.store.get_meta("lexical_seq") or 0) == 0

    def compact_lexical(
        self, *, progress: bool = False, stop: threading.Event | None = None
    ) -> bool:
        """Write the keyword index again as one segment if its papers are scattered over
        several (``engine.lexical_rewrite``); whether it did. A stop leaves it as it was."""
        self.sync_lexical()
        if not lexical_rewrite.needs_compaction(self.lexical, self.store):
            return False
        try:
            lexical_rewrite.rewrite(self.lexical, self.store, progress=progress, stop=stop)
        except lexical_rewrite.Stopped:
            return False
        return True

    def _replay_lexical(self, known: Mapping[int, Paper], progress: bool = False) -> int:
        done = int(self.store.get_meta("lexical_seq") or 0)
        target = self.store.seq
        if done >= target:
            return 0
        if done == 0:  # every paper: into one segment, replacing whatever was uncommitted
            n = lexical_rewrite.rewrite(self.lexical, self.store, progress=progress)
            self.store.set_meta("lexical_seq", str(target))
            return n
        n = 0
        docids = [d for d, _ in self.store.changes_after(done)]
        for i in range(0, len(docids), 5000):
            chunk = docids[i : i + 5000]
            decoded = self.store.get([d for d in chunk if d not in known])
            self.lexical.upsert(
                [
                    (d, known[d] if d in known else decoded[d])
                    for d in chunk
                    if d in known or d in decoded
                ]
            )
            n += len(chunk)
        dead = self.store.tombstones_since(done)
        if dead:
            self.lexical.delete([d for d, _ in dead])
            n += len(dead)
        self.commit_lexical(target)
        return n

    def _lexical_commits(self) -> tuple[str | None, str | None]:
        """Changes with every lexical commit: the store sequence it holds, set after the
        commit, and the last rewrite (``engine.lexical_rewrite``), which may not move it."""
        store = self.store
        return store.get_meta("lexical_seq"), store.get_meta(lexical_rewrite.LAST_REWRITE)

    def commit_lexical(self, seq: int) -> None:
        """Commit Tantivy, then record ``seq`` as the last store change it holds (the order
        that keeps a crash, and a backup, consistent: see ``papersift.backup``)."""
        self.lexical.commit()
        self.store.set_meta("lexical_seq", str(seq))

    def reset_lexical(self) -> None:
        """Make the next ``sync_lexical`` replay every paper (a rebuilt lexical index)."""
        self.store.set_meta("lexical_seq", "0")
