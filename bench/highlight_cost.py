"""What making Tantivy's snippets in Python (``engine.highlight``) saves a page of hits.

    .venv/bin/python bench/highlight_cost.py [--size 0] [--queries 200] [--rounds 6]
        [--modes keyword] [--write]

One process, one scale directory: each title query's first page (24 hits) is searched
once, then ``make_hits`` builds that page again, in rounds that alternate which way runs
first: with the snippets of texts that hold a query term made by Tantivy (the old path:
``engine.highlight.query_fields`` made to answer None) and made in Python. Thread CPU
per page, each round's mean, of the whole ``make_hits`` and of its snippet part alone
(setting up the highlight for the query, then each hit's terms and its title's and
abstract's HTML). The pages must come out the same both ways.

    .venv/bin/python bench/highlight_cost.py --tokens [--size 0] [--queries 200]
        [--rounds 6] [--modes keyword,hybrid]

``engine.why.text_tokens`` (the tokens of a lowercased title or abstract that start with a
query's stem roots, read for each hit's "why" and snippet) against the version before
short roots got expressions of their own (``old_text_tokens``, kept here), on the same
pages, in rounds that alternate which runs first: thread CPU per page of reading the 24
titles and abstracts as ``engine.hits.Highlight`` does (lowercase, then ``text_tokens``
with the query's roots), each round's mean, and of the whole ``make_hits`` with each
(Python snippets). The new one runs with its root-set plans cleared before each round
("new"), and with its short roots' compiled expressions cleared too ("new, cold": each
short root compiled once a round, as a fresh process would).
Tokens (offsets, tokens, order) and pages must come out the same.

    .venv/bin/python bench/highlight_cost.py --check-tokens [--size 0] [--queries 200]
        [--per-text 3]

Every paper's lowercased title and abstract in the scale directory (read-only), each
against ``--per-text`` of the title queries' root sets (both the snippet's and the
"why"'s), and every text that is not ASCII against all of them: the pairs compared and
those where the new ``text_tokens`` differs from the old (offsets, tokens or order).
"""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(ROOT))

from bench import scale_data  # noqa: E402
from bench.common import bench_config, log, publish, scale_parser  # noqa: E402
from bench.hit_pages import Page, build_pages, make_pages, table_head  # noqa: E402
from bench.peers.compare import sample_docs, title_queries  # noqa: E402

TextTokens = Callable[[str, tuple[str, ...]], dict[int, str]]
_TOKEN = re.compile(r"[^\W_]+")


def old_text_tokens(low: str, roots: tuple[str, ...]) -> dict[int, str]:
    """``engine.why.text_tokens`` before short roots got expressions of their own."""
    tokens: dict[int, str] = {}
    for root in roots:
        at = low.find(root)
        while at != -1:
            if (at == 0 or not low[at - 1].isalnum()) and at not in tokens:  # a token's start
                token = _TOKEN.match(low, at)
                if token:
                    tokens[at] = token.group()
            at = low.find(root, at + 1)
    return tokens


def run(size: int, n: int, rounds: int, modes: list[str]) -> str:
    from papersift.engine import hits as hits_module
    from papersift.engine.highlight import query_fields
    from papersift.engine.hits import Highlight
    from papersift.engine.search import open_engine
    from papersift.engine.why import analysed

    engine = open_engine(bench_config(scale_data.data_path(size)))
    queries = title_queries(sample_docs(size), n)
    data = engine.data

    def use_python(on: bool) -> None:
        hits_module.query_fields = query_fields if on else (lambda *_: None)  # type: ignore[assignment]

    def build(pages: list[Page], on: bool) -> tuple[float, list[object]]:
        """The pages by ``make_hits``: ms per page, and what they hold."""
        use_python(on)
        return build_pages(data, pages)

    def snippet_part(pages: list[Page], on: bool) -> float:
        """ms per page of ``make_hits``' snippet part (the papers already read)."""
        use_python(on)
        papers = [data.store.get([d for d, _ in page]) for page, *_ in pages]
        c0 = time.thread_time()
        for (_, q, _, words), got in zip(pages, papers, strict=True):
            terms = analysed(words)
            searcher = data.lexical.searcher()
            gens = data.lexical.snippet_generators(q, searcher)
            fields = hits_module.query_fields(*gens, searcher, words, terms)
            highlight = Highlight(*gens, terms, fields)
            for paper in got.values():
                found = highlight.found(paper)
                highlight.html("ti", paper.title, found)
                highlight.html("abs", paper.abstract, found)
        return (time.thread_time() - c0) * 1000 / len(pages)

    rows = []
    try:
        for mode in modes:
            pages = make_pages(engine, queries, mode)
            whole: dict[bool, list[float]] = {False: [], True: []}
            part: dict[bool, list[float]] = {False: [], True: []}
            for r in range(rounds):
                for on in (False, True) if r % 2 == 0 else (True, False):
                    ms, out = build(pages, on)
                    whole[on].append(ms)
                    part[on].append(snippet_part(pages, on))
                    if r == 0 and on:
                        assert out == build(pages, False)[1], "the pages differ"
            use_python(True)
            log(f"{mode}: {len(pages)} pages")
            for on, label in ((False, "Tantivy"), (True, "Python (engine.highlight)")):
                for what, times in (("make_hits", whole[on]), ("snippet part", part[on])):
                    each = " / ".join(f"{x * 1000:.0f}" for x in times)
                    median = sorted(times)[len(times) // 2] * 1000
                    rows.append(f"| {mode} | {what} | {label} | {median:.0f} | {each} |")
    finally:
        use_python(True)
        engine.close()
    head = table_head(
        size, n, rounds, "mode | part | snippets by | µs per page (median) | each round"
    )
    return head + "\n".join(rows) + "\n"


def run_tokens(size: int, n: int, rounds: int, modes: list[str]) -> str:
    """The old and the new ``text_tokens`` on the same pages (see the module docstring)."""
    from papersift.engine import hits as hits_module
    from papersift.engine import why
    from papersift.engine.hits import MAX_TERMS
    from papersift.engine.search import open_engine

    engine = open_engine(bench_config(scale_data.data_path(size)))
    queries = title_queries(sample_docs(size), n)
    data = engine.data
    variants: dict[str, TextTokens] = {
        "old": old_text_tokens, "new": why.text_tokens, "new, cold": why.text_tokens,
    }  # fmt: skip

    def prepare(name: str) -> TextTokens:
        why._plans.clear()  # each page's roots planned afresh, as a new request's are
        if name == "new, cold":
            why._short_any.clear()
            why._short_ascii.clear()
            re.purge()  # and re's own cache of them
        hits_module.text_tokens = variants[name]  # what Highlight reads the texts with
        return variants[name]

    def tokens_part(pages: list[Page], name: str) -> tuple[float, list[object]]:
        """ms per page of reading its titles and abstracts as ``Highlight`` does."""
        fn = prepare(name)
        work = []
        for page, *_, words in pages:
            terms = why.analysed(words)
            roots = why.stem_roots(terms) if 0 < len(terms) <= MAX_TERMS else ()
            got = data.store.get([d for d, _ in page]).values()
            work.append((roots, [(p.title, p.abstract) for p in got]))
        out: list[dict[int, str]] = []
        c0 = time.thread_time()
        for roots, texts in work:
            for title, abstract in texts:
                out.append(fn(title.lower(), roots))
                out.append(fn(abstract.lower(), roots))
        ms = (time.thread_time() - c0) * 1000 / len(pages)
        return ms, [list(t.items()) for t in out]

    def build(pages: list[Page], name: str) -> tuple[float, list[object]]:
        prepare(name)
        return build_pages(data, pages)

    rows = []
    try:
        for mode in modes:
            pages = make_pages(engine, queries, mode)
            times: dict[tuple[str, str], list[float]] = {}
            seen: dict[str, tuple[object, object]] = {}
            tokens_part(pages, "new")  # untimed: the short roots' expressions, the word caches
            build(pages, "old")
            for r in range(rounds):
                order = list(variants) if r % 2 == 0 else list(variants)[::-1]
                for name in order:
                    ms, tokens = tokens_part(pages, name)
                    times.setdefault(("text_tokens", name), []).append(ms)
                    whole, built = build(pages, name)
                    times.setdefault(("make_hits", name), []).append(whole)
                    if r == 0:
                        seen[name] = (tokens, built)
            assert all(v == seen["old"] for v in seen.values()), "the tokens or pages differ"
            log(f"{mode}: {len(pages)} pages, tokens and pages the same old and new")
            for (what, name), each_round in times.items():
                each = " / ".join(f"{x * 1000:.0f}" for x in each_round)
                median = sorted(each_round)[len(each_round) // 2] * 1000
                rows.append(f"| {mode} | {what} | {name} | {median:.0f} | {each} |")
    finally:
        hits_module.text_tokens = why.text_tokens
        engine.close()
    head = table_head(
        size, n, rounds, "mode | part | text_tokens | µs per page (median) | each round"
    )
    return head + "\n".join(rows) + "\n"


def check_tokens(size: int, n: int, per_text: int) -> str:
    """The old and the new ``text_tokens`` on every title and abstract (see the module
    docstring): the pairs compared and the differences."""
    from papersift.engine.query import parse_user_query
    from papersift.engine.store import PaperStore
    from papersift.engine.why import analysed, query_words, stem_roots, text_tokens

    queries = title_queries(sample_docs(size), n)
    root_sets: list[tuple[str, ...]] = []
    for q in queries:
        for roots in (stem_roots(analysed(q)), query_words(parse_user_query(q)).roots):
            if roots and roots not in root_sets:
                root_sets.append(roots)
    store = PaperStore(scale_data.data_path(size) / "papers.sqlite", readonly=True)
    pairs = differ = texts = odd = tokens = 0
    short = sum(any(len(r) <= 2 for r in roots) for roots in root_sets)
    t0 = time.perf_counter()
    try:
        for batch in store.changed_since(0, 5000):
            for docid, paper, _ in batch:
                for text in (paper.title, paper.abstract):
                    low = text.lower()
                    texts += 1
                    if low.isascii():
                        chosen = [root_sets[(docid + k * 7919) % len(root_sets)]
                                  for k in range(per_text)]  # fmt: skip
                    else:
                        odd += 1
                        chosen = root_sets
                    for roots in chosen:
                        want = old_text_tokens(low, roots)
                        pairs += 1
                        tokens += len(want)
                        differ += list(text_tokens(low, roots).items()) != list(want.items())
    finally:
        store.close()
    return (
        f"text_tokens old and new, scale directory {scale_data.label(size)}: {texts} titles "
        f"and abstracts ({odd} not ASCII), {len(root_sets)} root sets of {n} title queries "
        f"({short} with a root of one or two letters); {pairs} pairs compared ({tokens} "
        f"tokens), {differ} differ; {time.perf_counter() - t0:.0f} s\n"
    )


def main() -> None:
    ap = scale_parser(__doc__, rounds=6)
    ap.add_argument("--modes", default="keyword")
    ap.add_argument("--tokens", action="store_true", help="old and new text_tokens instead")
    ap.add_argument("--check-tokens", action="store_true", help="old and new on every text")
    ap.add_argument("--per-text", type=int, default=3, help="--check-tokens: root sets a text")
    args = ap.parse_args()
    if args.check_tokens:
        print(check_tokens(args.size, args.queries, args.per_text))
        return
    if args.tokens:
        body = run_tokens(args.size, args.queries, args.rounds, args.modes.split(","))
        publish("text_tokens cost", body, args.write)
        return
    body = run(args.size, args.queries, args.rounds, args.modes.split(","))
    publish("highlight cost", body, args.write)


if __name__ == "__main__":
    main()
