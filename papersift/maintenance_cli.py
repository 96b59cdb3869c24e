"""``papersift reindex``, ``doctor`` and ``backup``: keeping a data directory healthy (index
maintenance, health checks and repairs, a consistent copy)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from papersift.cli_args import config_of, config_path, json_option, print_json, writing_to
from papersift.core.wording import counted


def cmd_reindex(args: argparse.Namespace) -> int:
    from papersift.indexer.harvest import reindex

    with writing_to(config_of(args), "reindex", create=False) as data:
        done = reindex(data, progress=not args.json and sys.stderr.isatty())
        papers = data.store.count()
    if args.json:
        print_json({"embedded_now": done, "papers": papers})
    else:
        print(f"index maintenance done: {counted(done, 'paper')} embedded, "
              f"{counted(papers, 'paper')}")  # fmt: skip
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    from papersift import doctor
    from papersift.core.config_load import load_config
    from papersift.core.errors import ConfigError

    path = config_path(args)
    try:
        config = load_config(path)
    except ConfigError as exc:
        checks = [doctor.Check("config", "FAIL", str(exc), "fix the named key or value")]
    else:
        if args.fix:
            doctor.repair(config, say=lambda line: print(line, file=sys.stderr))
        checks = [doctor.config_check(path), *doctor.diagnose(config)]
    if args.json:
        print_json({"ok": doctor.ok(checks), "checks": [c.json() for c in checks]})
    else:
        print(doctor.table(checks))
    return 0 if doctor.ok(checks) else 1


def cmd_backup(args: argparse.Namespace) -> int:
    from papersift.backup import backup

    report = backup(config_of(args), Path(args.dest))
    if args.json:
        print_json(report.json())
    else:
        print(report.line())
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The maintenance commands, in ``papersift --help``'s order."""
    p = sub.add_parser(
        "reindex",
        parents=[common],
        help="index maintenance: repair, embed the backlog, compact",
        description=(
            "Replay missed changes, embed the backlog, fold vector segments, write a scattered "
            "keyword index as one segment."
        ),
    )
    json_option(p)
    p.set_defaults(func=cmd_reindex)

    p = sub.add_parser(
        "doctor",
        parents=[common],
        help="check config, data directory, indexes, model and disk; say what to fix",
        description="Health checks, read-only unless --fix; exit status 1 if any check FAILs.",
    )
    p.add_argument("--fix", action="store_true", help="first do the safe repairs (server stopped)")
    json_option(p)
    p.set_defaults(func=cmd_doctor)

    p = sub.add_parser(
        "backup",
        parents=[common],
        help="copy the data directory consistently, even while serving",
        description="Copy store, indexes, vectors and manifest into DEST (a new or empty folder).",
    )
    p.add_argument("dest", metavar="DEST", help="a folder that does not exist yet, or an empty one")
    json_option(p)
    p.set_defaults(func=cmd_backup)
