"""Peer search engines for side-by-side benchmarks: one module per peer, one interface."""

from __future__ import annotations

import importlib

from bench.peers.base import Doc, Peer, Unavailable

__all__ = ["PEERS", "Doc", "Peer", "Unavailable", "load"]

# Module name -> class name; each module imports its library lazily inside the class.
PEERS: dict[str, str] = {
    "sqlite_fts5": "SqliteFts5",
    "xapian_peer": "XapianPeer",
    "bm25s_peer": "Bm25sPeer",
    "lancedb_peer": "LanceDbPeer",
    "typesense_peer": "TypesensePeer",
}


def load(module: str) -> type[Peer]:
    """The peer class of ``module``; raises Unavailable when its library is missing."""
    try:
        mod = importlib.import_module(f"bench.peers.{module}")
    except ImportError as exc:
        raise Unavailable(f"{module}: {exc}") from None
    cls: type[Peer] = getattr(mod, PEERS[module])
    cls.check()
    return cls
