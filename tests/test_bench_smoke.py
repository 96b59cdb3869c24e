"""Smoke test of the benchmark harness (bench/peers, bench/http_load, the byte check of
bench/serialize_bench) on a tiny corpus."""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import date
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from bench.http_load import _lua, run_python, run_wrk
from bench.peers import PEERS, Doc, Unavailable, load
from bench.peers.compare import overlap, title_queries
from papersift.engine.results import Filters, ResearcherRef, SearchRequest

TEXTS = [
    ("Dense passage retrieval for open-domain question answering", "Dense vectors beat BM25."),
    ("Graph neural networks for recommendation", "Recommender systems with message passing."),
    ("Query expansion with pseudo relevance feedback", "Classic feedback improves recall."),
    ("Federated learning under differential privacy", "Clients train without sharing data."),
]
DOCS = [Doc(f"d{i}", t, a) for i, (t, a) in enumerate(TEXTS)]


@pytest.mark.parametrize("module", list(PEERS))
def test_each_installed_peer_finds_the_obvious_paper(module: str, tmp_path: Path) -> None:
    try:
        cls = load(module)
    except Unavailable as exc:
        pytest.skip(str(exc))
    rng = np.random.default_rng(0)
    vecs = rng.normal(size=(len(DOCS), 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    peer = cls(tmp_path / module)
    try:
        peer.build(DOCS, vecs if "semantic" in cls.modes else None)
        assert peer.keyword("graph neural recommendation", 2)[0] == "d1"
        assert isinstance(peer.keyword('"unclosed quote +federated', 2), list)  # never raises
        if "semantic" in cls.modes:
            assert peer.semantic(vecs[2], 2)[0] == "d2"
            assert "d2" in peer.hybrid("query expansion", vecs[2], 2)
        assert peer.index_bytes() > 0
    finally:
        peer.close()


def test_title_queries_are_deterministic_spans_of_titles() -> None:
    docs = DOCS * 3
    a, b = title_queries(docs, 5), title_queries(docs, 5)
    assert a == b and len(set(a)) == 5
    titles = [d.title.lower() for d in DOCS]
    assert all(any(q in t for t in titles) for q in a)
    assert overlap(["a", "b"], ["b", "c"], k=2) == 0.5


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"ok" if "q=" in self.path else b"no"
        self.send_response(200 if body == b"ok" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None


@pytest.fixture
def local_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/s?q="
    finally:
        server.shutdown()
        server.server_close()


def test_load_generators_count_requests_and_errors(local_server: str, tmp_path: Path) -> None:
    res = run_python(local_server, 2, 1, ["a b", "c"])
    assert res["requests"] > 0 and res["errors"] == 0 and res["p50"] > 0
    if shutil.which("wrk") is None:
        pytest.skip("wrk not installed")
    res = run_wrk(local_server, 2, 1, _lua(["a b", "c d"], tmp_path))
    assert res["requests"] > 0 and res["rps"] > 0 and res["errors"] == 0
    assert 0 < res["p50"] <= res["p99"]
    bad = run_wrk(local_server.replace("/s?q=", "/x"), 1, 1, _lua(["a"], tmp_path))
    assert bad["errors"] == bad["requests"] > 0  # every 404 counted


def test_serialize_bench_compares_like_with_like() -> None:
    """bench/serialize_bench.py times two ways of writing one search response: they write
    the same bytes, every field of the schema set (the fields its own data leaves empty
    too: a paper found by its id, researchers named by the query, every filter), and its
    check stops the run, naming the field, when they do not."""
    from bench.serialize_bench import check_same, demo_papers, new_path, old_path, result_of

    result, names = result_of(demo_papers(5))
    check_same(old_path(result, names), new_path(result, names))
    filters = Filters(
        categories=("cs.DL",), researchers=("Ada Lovelace",), date_from=date(2020, 1, 1),
        date_to=date(2024, 12, 31), researcher_ids=(7, 9), institutions=("00cvxb145",),
    )  # fmt: skip
    hits = (replace(result.hits[0], why=None), *result.hits[1:])
    full = replace(
        result, request=SearchRequest("ada", "semantic", filters, "newest", 2, 5), hits=hits,
        warnings=("ignored a quote",), direct=hits[1].paper, missing_id="2401.99999",
        researchers=(ResearcherRef(7, "Ada Lovelace", 3),), reachable=20,
    )  # fmt: skip
    check_same(old_path(full, names), new_path(full, names))
    changed = replace(full, hits=(replace(hits[0], score=1.0), *hits[1:]))
    with pytest.raises(SystemExit, match=r"\$\.hits\[0\]\.score: 1\.0 \(old\)"):
        check_same(old_path(changed, names), new_path(full, names))
    with pytest.raises(SystemExit, match=r"\$\.facets\.researchers\[1\]\.name: None"):
        check_same(old_path(full, {}), new_path(full, names))
