"""The interface every peer implements, and helpers they share."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.float32]
_WORD = re.compile(r"\w+", re.UNICODE)


class Unavailable(Exception):
    """The peer's library or binary cannot be used here; the message says why."""


@dataclass(frozen=True, slots=True)
class Doc:
    id: str
    title: str
    abstract: str


def words(text: str) -> list[str]:
    """The word tokens of a query (for peers whose query syntax must not see punctuation)."""
    return _WORD.findall(text)


class Peer(ABC):
    """One engine under test. ``build`` indexes the documents (and, for peers with vector
    search, the given vectors in the same order); the searches return document ids, best
    first. ``semantic``/``hybrid`` get the query vector made by our embedder."""

    name: ClassVar[str]
    modes: ClassVar[tuple[str, ...]] = ("keyword",)
    note: ClassVar[str] = ""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)

    @classmethod
    def check(cls) -> None:
        """Raise Unavailable if this peer cannot run here (library or binary missing)."""
        return None

    @classmethod
    @abstractmethod
    def version(cls) -> str: ...

    @abstractmethod
    def build(self, docs: Sequence[Doc], vectors: Vectors | None) -> None: ...

    @abstractmethod
    def keyword(self, query: str, k: int) -> list[str]: ...

    def semantic(self, qvec: Vectors, k: int) -> list[str]:
        raise NotImplementedError(f"{self.name} has no vector search")

    def hybrid(self, query: str, qvec: Vectors, k: int) -> list[str]:
        raise NotImplementedError(f"{self.name} has no hybrid search")

    def index_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.workdir.rglob("*") if p.is_file())

    def close(self) -> None:
        """Release files, connections and processes."""
        return None
