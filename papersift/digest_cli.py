"""``papersift digest [--dry-run] [--user EMAIL] [--date YYYY-MM-DD]``: the e-mail digests.

Sends now what the ``digest`` job of ``serve`` sends on its schedule (each member's window
once), or with ``--dry-run`` prints what would be sent, sending and recording nothing: on
stdout each would-be message under a line naming its member ("EMAIL: would send 3 papers in
1 section for WINDOW:"); on stderr the notes and the other per-member lines (nothing new,
already sent, not confirmed).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from datetime import date
from typing import Any

from papersift.core.config import Config
from papersift.core.errors import PapersiftError


def cmd_digest(args: argparse.Namespace, config: Config) -> int:
    from papersift.engine.search import open_engine
    from papersift.indexer.digest_run import MAIL_OFF, base_url, run_digests

    if not (config.data_dir / "members.sqlite").is_file():
        raise PapersiftError(f"no accounts in {config.data_dir}; add one with `papersift user add`")
    # A dry run's output is the would-be messages, each under the line naming its member
    # (`--dry-run > out.txt`); its other per-member lines are notes. A real run's per-member
    # lines are its output.
    say = _note if args.dry_run else print
    with open_engine(config) as engine:
        report = run_digests(engine, config, today=args.date, user=args.user,
                             dry_run=args.dry_run, say=say, show=print)  # fmt: skip
    if report.error and not config.mail.host:
        raise PapersiftError(report.error)
    if report.error:  # nothing unsent was recorded: a later run sends the rest
        raise PapersiftError(f"{report.error}; sent {report.sent}, the rest go at the next run")
    # After the run, so that an error stays the one line on stderr.
    if args.dry_run and not config.mail.host:
        _note(f"note: {MAIL_OFF}")
    if not config.server.base_url:
        _note(f"note: [server] base_url is empty: the links point to {base_url(config)}")
    if not args.dry_run:
        print(f"digests: {report.sent} sent, {report.empty} with nothing new, "
              f"{report.already} already sent")  # fmt: skip
    return 0


def _note(line: str) -> None:
    print(line, file=sys.stderr)


def add_parser(
    sub: Any,
    common: argparse.ArgumentParser,
    config_of: Callable[[argparse.Namespace], Config],
    date_type: Callable[[str], date],
) -> None:
    p = sub.add_parser(
        "digest",
        parents=[common],
        help="send members' e-mail digests now (or --dry-run: print them)",
        description="Send each member's daily or weekly digest for its last window, once.",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the messages that would be sent on stdout (the notes on stderr); send nothing",
    )
    p.add_argument("--user", metavar="EMAIL", help="only this member")
    p.add_argument(
        "--date", type=date_type, metavar="YYYY-MM-DD",
        help="send as if today were this day (default: today, UTC)",
    )  # fmt: skip
    p.set_defaults(func=lambda args: cmd_digest(args, config_of(args)))
