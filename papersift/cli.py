"""The ``papersift`` command: import, index, search, stats, serve.

Library code raises typed errors; this boundary turns them into one line on stderr and a
non-zero exit code.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from papersift import __version__
from papersift.cli_args import (
    add_search_options,
    common_options,
    config_of,
    full_date,
    json_option,
    port_number,
    positive,
    print_json,
    text_last,
    writing_to,
)
from papersift.core.errors import PapersiftError
from papersift.core.wording import counted

log = logging.getLogger("papersift")


# Commands whose positional is free text, which may begin with '-' (``text_last``).
FREE_TEXT = ("search", "match-affiliation")


# -- commands -----------------------------------------------------------------------------


def cmd_import(args: argparse.Namespace) -> int:
    from papersift.indexer.build import import_files
    from papersift.indexer.snapshot import SkippedLine

    config = config_of(args)
    paths = [Path(p) for p in args.files]
    for p in paths:
        if p.is_dir():
            raise PapersiftError(f"{p} is a directory; name the snapshot files in it")
        if not p.is_file():
            raise PapersiftError(f"no such file: {p}")

    def warn(s: SkippedLine) -> None:
        if not args.json:
            print(f"skipped line {s.line}: {s.reason}", file=sys.stderr)

    with writing_to(config, "import") as data:
        report = import_files(
            data,
            paths,
            limit=args.limit,
            progress=not args.json and sys.stderr.isatty(),
            on_skip=warn,
        )
    if args.json:
        print_json(
            {
                "read": report.read,
                "added": report.added,
                "updated": report.updated,
                "unchanged": report.unchanged,
                "skipped": [
                    {"line": s.line, "reason": s.reason, "id": s.arxiv_id, "field": s.field}
                    for s in report.skipped
                ],
            }
        )
    else:
        print(report.line())
        if not args.no_hint:
            print(
                "keyword search is ready; run `papersift index` to cluster researchers and "
                "embed for semantic search (`serve` does both in the background)"
            )
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from papersift.indexer.build import index_backlog

    with writing_to(config_of(args), "index", create=False) as data:
        data.sync_lexical()
        tty = not args.json and sys.stderr.isatty()
        clustered, done = index_backlog(data, limit=args.limit, progress=tty, cluster=args.cluster)
        model = data.indexing_embedder.model_id
        papers, embedded = data.store.count(), data.store.embedded_count(model)
    if args.json:
        print_json(
            {"clustered_now": clustered, "embedded_now": done, "embedded": embedded,
             "papers": papers, "model_id": model}
        )  # fmt: skip
    else:
        if clustered:
            print(f"researcher identities brought up to date for {counted(clustered, 'paper')}")
        print(f"embedded {counted(done, 'paper')}; {embedded:,} of {papers:,} now have vectors "
              f"({model})")  # fmt: skip
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from papersift.core.dates import check_order
    from papersift.core.errors import QueryError
    from papersift.engine.list_page import list_page
    from papersift.engine.results import Filters, SearchRequest
    from papersift.engine.search import open_engine
    from papersift.engine.serialize import cli_result

    try:
        check_order(args.date_from, args.date_to, ("--from", "--to"))  # the web's check
    except ValueError as exc:
        raise PapersiftError(str(exc)) from None
    with open_engine(config_of(args)) as engine:
        # As the web answers 400, before the model loads: the filter could match nothing.
        unknown = engine.unknown_categories(args.category or ())
        if unknown:
            which, it = ("category", "it") if len(unknown) == 1 else ("categories", "them")
            raise QueryError(
                f"unknown {which} {', '.join(map(repr, unknown))}: no paper in this index has "
                f"{it}; `papersift stats --json` lists the categories"
            )
        request = SearchRequest(
            query=args.query,
            mode=args.mode,
            filters=Filters(
                categories=tuple(args.category or ()),
                researchers=tuple(args.researcher or ()),
                date_from=args.date_from,
                date_to=args.date_to,
            ),
            sort=args.sort,
            page=args.page,
            page_size=args.page_size,
            autocorrect=args.autocorrect,
        )
        # A page past the last, even past the result window, is empty and says so, as on
        # the web; only a list that runs on past the window refuses it (WindowError).
        result = list_page(engine, request, engine.config.search)
        looser = []  # an empty answer: what to try instead, as the search page offers
        if not result.total and result.page == 1 and not result.direct and not args.json:
            from papersift.server.no_results import looser_found

            looser = looser_found(engine, result)
    if not result.hits and result.page > 1:  # past the last page: say so, as the API does
        from papersift.server.views import past_last

        past = past_last(result, engine.config.search.max_window)
        result = replace(result, warnings=(*result.warnings, past)) if past else result
    if args.json:
        print_json(cli_result(result))
        return 0
    for w in result.warnings:
        print(f"note: {w}", file=sys.stderr)
    if result.corrected:
        print(f"showing results for: {result.corrected} (no paper matches the query as typed; "
              "--no-autocorrect searches it)")  # fmt: skip
    elif result.suggestion:
        print(f"did you mean: {result.suggestion}")
    first = (result.page - 1) * result.page_size
    for r in result.researchers:
        print(f"researcher: {r.name} ({counted(r.papers, 'paper')}), /researchers/{r.rid}")
    print(f"{counted(result.total, 'result')} ({result.mode}, {result.took_ms:.1f} ms)")
    for label, _, n in looser:
        print(f"try: {label[:1].lower()}{label[1:]} ({counted(n, 'paper')})")
    from papersift.core.tex import plain_text  # pylatexenc: only when there are hits

    for i, hit in enumerate(result.hits, start=first + 1):
        p = hit.paper
        authors = ", ".join(a.name for a in p.authors[:4]) + (
            " et al." if len(p.authors) > 4 else ""
        )
        print(f"{i:4d}. {p.arxiv_id}  {plain_text(p.title)}")  # as pages show it: no TeX
        print(f"      {authors} | {p.published.isoformat()} | {' '.join(p.categories)}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from papersift.core.resources import demo_import_hint
    from papersift.engine.search import open_engine
    from papersift.engine.serialize import local_stats
    from papersift.engine.vector_segments import model_dir_name, segment_paths
    from papersift.engine.writer_lock import writing

    with open_engine(config_of(args)) as engine:
        stats = engine.stats_with_progress()
    if args.json:
        print_json(local_stats(stats, str(engine.config.data_dir)))
        return 0
    print(f"data directory  {engine.config.data_dir}")
    print(f"papers          {stats.papers:,}")
    print(f"embedded        {stats.embedded:,} ({stats.coverage:.1%}) with {stats.model_id}")
    if stats.embedded and not segment_paths(
        engine.config.data_dir / "vectors" / model_dir_name(stats.model_id)
    ):  # the store's count alone said all was well (search then said: no vector yet)
        print("vectors         none on disk for those papers: run `papersift doctor`")
    progress = stats.embedding
    if progress is not None:
        which = "" if progress.model_id == stats.model_id else f" (next model {progress.model_id})"
        # The rate and time to go only while a process embeds (holds the writer lock).
        running = writing(engine.config.data_dir) is not None
        print(f"embedding       {progress.line(running)}{which}")
    if stats.people_pending:
        pending = counted(stats.people_pending, "paper")
        print(f"researchers     {pending} not yet clustered (papersift index)")
    if stats.oldest is None:
        hint = f"`papersift import FILE...` adds some {demo_import_hint()}"
        print(f"published       no papers yet: {hint}")
    else:
        print(f"published       {stats.oldest} .. {stats.newest}")
    top = ", ".join(f"{c.value} {c.count:,}" for c in stats.categories[:10])
    print(f"top categories  {top}")
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from papersift.serve import serve

    config = config_of(args)
    return serve(config, host=args.host, port=args.port)


# -- parser -------------------------------------------------------------------------------


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    """The ``papersift`` parser and each command's own, by name."""
    from papersift.engine.results import MODES, SORTS

    parser = argparse.ArgumentParser(
        prog="papersift",
        description="Self-hostable hybrid search engine for research papers.",
        parents=[common_options(top=True)],  # before the command, or after it (``common``)
    )
    parser.add_argument("--version", action="version", version=f"papersift {__version__}")
    common = common_options()
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "import",
        parents=[common],
        help="import arXiv snapshot JSON-lines files",
        description="Import arXiv bulk-snapshot JSON lines (plain, .gz, .xz).",
    )
    p.add_argument("files", nargs="+", metavar="FILE", help="a snapshot file (plain, .gz or .xz)")
    p.add_argument("--limit", type=positive, help="import at most N records per file")
    json_option(p)
    p.add_argument("--no-hint", action="store_true", help=argparse.SUPPRESS)
    p.set_defaults(func=cmd_import)

    p = sub.add_parser(
        "index",
        parents=[common],
        help="cluster researchers and embed papers that an import left for later",
        description="Work through the backlog an import leaves: researcher identities of "
        "new papers, then embeddings for semantic search (both resumable).",
    )
    p.add_argument("--limit", type=positive, help="embed at most N papers")
    p.add_argument(
        "--cluster",
        metavar="ADDRESS",
        help="embed on the Dask scheduler at ADDRESS (e.g. tcp://10.0.0.5:8786) instead of "
        "in this process; overrides [embedding] cluster",
    )
    json_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser(
        "search",
        parents=[common],
        help="search the index",
        description="Search; the query syntax is in the README.",
    )
    p.add_argument(
        "query",
        help='words, "phrases", +must, -not (a leading - works: "-vision transformer"), '
        "ti: au: abs: cat:, or an arXiv id",
    )
    add_search_options(p, MODES, SORTS)
    json_option(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser(
        "stats",
        parents=[common],
        help="corpus and index statistics",
        description="Papers, embedding coverage and progress, researchers left to cluster, "
        "dates and top categories; loads no model.",
    )
    json_option(p)
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "serve",
        parents=[common],
        help="serve the web app and API",
        description="Serve; on first start imports the bootstrap corpus.",
    )
    p.add_argument("--host", help="default: [server] host")
    p.add_argument("--port", type=port_number, help="default: [server] port")
    p.set_defaults(func=cmd_serve)

    from papersift import harvest_cli

    harvest_cli.add_parsers(sub, common)
    from papersift import maintenance_cli

    maintenance_cli.add_parsers(sub, common)
    from papersift import enrich_cli

    enrich_cli.add_parsers(sub, common)
    from papersift import user_cli

    user_cli.add_parser(sub, common, config_of)
    from papersift import digest_cli

    digest_cli.add_parser(sub, common, config_of, full_date)
    return parser, sub.choices


class LogAboveBars(logging.StreamHandler[TextIO]):
    """Log lines on stderr written above the progress bars drawn there (tqdm clears them,
    writes the line, draws them again), not into a bar's line: "embed:   0%|...|2026-12-07
    10:12:11,555 INFO ... saved the fused graph"."""

    def emit(self, record: logging.LogRecord) -> None:
        tqdm = sys.modules.get("tqdm")  # imported by every command that draws a bar
        if tqdm is None:
            super().emit(record)
            return
        try:
            tqdm.tqdm.write(self.format(record), file=self.stream)
        except Exception:
            self.handleError(record)


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(text_last(argv, {c: commands[c] for c in FREE_TEXT}, parser))
    # Our own loggers speak at INFO (DEBUG with -v); libraries only when something is wrong.
    logging.basicConfig(
        level=logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=[LogAboveBars(sys.stderr)],
    )
    logging.getLogger("papersift").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    try:
        return int(args.func(args))
    except PapersiftError as exc:
        print(f"papersift: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("papersift: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of the output went away (`| head`): stop quietly, as Unix tools do;
        # stdout goes to /dev/null so that flushing it at exit does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except Exception as exc:
        # Imported on an error only: at start-up it cost every command ~24 ms.
        from papersift.engine.store import DatabaseError

        if not isinstance(exc, DatabaseError):
            raise
        # Damaged past what opening it showed.
        print(f"papersift: error: a database of the data directory cannot be read ({exc}); "
              "`papersift doctor` checks every part of it", file=sys.stderr)  # fmt: skip
        return 1
