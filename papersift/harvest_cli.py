"""``papersift harvest`` and ``add``: new and changed papers fetched from arXiv (OAI-PMH, or
the arXiv API by id), then embedded."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING, Any

from papersift.cli_args import add_harvest_window, config_of, json_option, print_json, writing_to
from papersift.core.errors import PapersiftError
from papersift.core.wording import counted

if TYPE_CHECKING:
    from papersift.indexer.harvest import SetWindow


def _harvest_json(report: Any) -> dict[str, Any]:
    return {**report.counts(), "pages": report.pages, "requests": report.requests,
            "resumed": report.resumed, "skipped_reasons": report.skipped}  # fmt: skip


# A window longer than this over every set is worth a note on how to narrow it.
LONG_WINDOW_DAYS = 30


def window_lines(w: SetWindow, url: str, *, sets_configured: bool, today: date) -> list[str]:
    """What the harvest of one set asks for, before it starts (a first harvest on an old
    snapshot asks for years of all of arXiv: not as a surprise); a note on how to narrow
    a long window over every set."""
    which = f"set {w.set_spec}" if w.set_spec else "all sets"
    span = (
        f"records changed from {w.start} to {w.until or 'now'}" if w.start
        else "records of any date"
    )  # fmt: skip
    head = "resuming the interrupted harvest of" if w.resuming else "harvesting"
    lines = [f"{head} {which} from {url}: {span} ({w.reason})"]
    days = None if w.start is None else ((w.until or today) - w.start).days
    if not sets_configured and (days is None or days > LONG_WINDOW_DAYS):
        length = (
            "the whole history" if days is None
            else f"{days:,} days" if days < 365 else f"about {days / 365.25:.1f} years"
        )  # fmt: skip
        lines.append(
            f"note: that is {length} of changes in every arXiv archive; `[harvest] sets` "
            '(e.g. sets = "cs math", or PAPERSIFT_HARVEST_SETS) harvests only those sets, '
            "--from YYYY-MM-DD a shorter window"
        )
    return lines


def cmd_harvest(args: argparse.Namespace) -> int:
    from papersift.core.dates import check_order
    from papersift.indexer.build import embed_brought_in
    from papersift.indexer.harvest import harvest

    try:
        check_order(args.date_from, args.until, ("--from", "--until"))  # as search checks
    except ValueError as exc:
        raise PapersiftError(str(exc)) from None
    tty = not args.json and sys.stderr.isatty()
    config = config_of(args)
    url = args.url or config.harvest.url
    today = datetime.now(UTC).date()
    if args.date_from is not None and str(args.date_from) > today.isoformat():
        raise PapersiftError(
            f"--from {args.date_from} is in the future: no record has changed since then"
        )

    def announce(w: SetWindow) -> None:
        sets = bool(config.harvest.sets.split())
        for line in window_lines(w, url, sets_configured=sets, today=today):
            print(line, file=sys.stderr)

    with writing_to(config, "harvest") as data:  # (a refusal stays one line: notes after it)
        if not config.harvest.mailto:  # arXiv asks harvesters for a contact (the User-Agent)
            print("note: [harvest] mailto is empty; arXiv asks harvesters for a contact "
                  "address (PAPERSIFT_HARVEST_MAILTO)", file=sys.stderr)  # fmt: skip
        report = harvest(
            data, url=url, date_from=args.date_from, until=args.until, progress=tty,
            announce=announce,
        )  # fmt: skip
        todo = 0 if args.no_embed else report.added + report.updated
        embedded = embed_brought_in(data, todo, progress=tty)
    if args.json:
        print_json({**_harvest_json(report), "embedded": embedded})
    else:
        print(report.line() + (f"; {counted(embedded, 'paper')} embedded" if embedded else ""))
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from papersift.engine.query import arxiv_id_in
    from papersift.indexer.build import embed_brought_in
    from papersift.indexer.harvest import add_ids

    bad = [raw for raw in args.ids if arxiv_id_in(raw) is None]
    if bad:  # before the data directory is opened (or made)
        raise PapersiftError(f"not an arXiv id: {bad[0]!r}")
    with writing_to(config_of(args), "add") as data:
        report, missing = add_ids(data, args.ids)
        todo = 0 if args.no_embed else report.added + report.updated
        embedded = embed_brought_in(data, todo)
    if args.json:
        print_json({**_harvest_json(report), "missing": missing, "embedded": embedded})
    else:
        done = f"; {counted(embedded, 'paper')} embedded" if embedded else ""
        print(f"{report.added:,} added, {report.updated:,} updated, {report.unchanged:,} "
              f"unchanged{done}")  # fmt: skip
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
