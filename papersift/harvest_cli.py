"""``papersift harvest`` and ``add``: new and changed papers fetched from arXiv (OAI-PMH, or
the arXiv API by id), then embedded."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from papersift.cli_args import add_harvest_window, config_of, json_option, print_json, writing_to
from papersift.core.errors import PapersiftError


def _harvest_json(report: Any) -> dict[str, Any]:
    return {**report.counts(), "pages": report.pages, "requests": report.requests,
            "resumed": report.resumed, "skipped_reasons": report.skipped}  # fmt: skip


def cmd_harvest(args: argparse.Namespace) -> int:
    from papersift.core.dates import check_order
    from papersift.indexer.build import embed_backlog
    from papersift.indexer.harvest import harvest

    try:
        check_order(args.date_from, args.until, ("--from", "--until"))  # as search checks
    except ValueError as exc:
        raise PapersiftError(str(exc)) from None
    tty = not args.json and sys.stderr.isatty()
    with writing_to(config_of(args), "harvest") as data:
        report = harvest(
            data, url=args.url, date_from=args.date_from, until=args.until, progress=tty
        )
        embedded = 0 if args.no_embed else embed_backlog(data, progress=tty)
    if args.json:
        print_json({**_harvest_json(report), "embedded": embedded})
    else:
        print(report.line() + (f"; {embedded} papers embedded" if embedded else ""))
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from papersift.core.paper import parse_arxiv_id
    from papersift.indexer.build import embed_backlog
    from papersift.indexer.harvest import add_ids

    bad = [raw for raw in args.ids if parse_arxiv_id(raw) is None]
    if bad:  # before the data directory is opened (or made)
        raise PapersiftError(f"not an arXiv id: {bad[0]!r}")
    with writing_to(config_of(args), "add") as data:
        report, missing = add_ids(data, args.ids)
        embedded = 0 if args.no_embed else embed_backlog(data)
    if args.json:
        print_json({**_harvest_json(report), "missing": missing, "embedded": embedded})
    else:
        print(f"{report.added} added, {report.updated} updated, {report.unchanged} unchanged")
        for arxiv_id in missing:
            print(f"not found: {arxiv_id}", file=sys.stderr)
    return 0 if not missing else 1


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The fetching commands, in ``papersift --help``'s order."""
    p = sub.add_parser(
        "harvest",
        parents=[common],
        help="harvest new and changed papers over OAI-PMH (resumable)",
        description="Harvest from [harvest] url; resumes an interrupted run, then embeds.",
    )
    p.add_argument("--url", help="OAI-PMH endpoint (default: [harvest] url)")
    add_harvest_window(p)
    p.add_argument("--no-embed", action="store_true", help="leave the embedding backlog")
    json_option(p)
    p.set_defaults(func=cmd_harvest)

    p = sub.add_parser(
        "add",
        parents=[common],
        help="add or update papers by arXiv id (arXiv API)",
        description="Fetch papers by id from [harvest] api_url and index them.",
    )
    p.add_argument("ids", nargs="+", metavar="ID", help="arXiv ids such as 2401.10241")
    p.add_argument("--no-embed", action="store_true", help="leave the embedding backlog")
    json_option(p)
    p.set_defaults(func=cmd_add)
