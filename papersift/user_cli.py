"""``papersift user add|list|remove|reset|confirm``: lab members' accounts, by an admin.

``add`` and ``reset`` print a generated password (it stays valid until the member changes
it at /account, so the output says they should), or with ``--password-stdin`` read the
password from standard input (one line), so it never shows in the process list or the
shell's history. ``confirm`` marks a signed-up address as the member's without the mailed
link (e.g. when this server sends no mail). Errors are one line (``papersift.cli`` prints
AccountError's message).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from papersift.cli_args import json_option
from papersift.core.config import Config
from papersift.core.errors import PapersiftError, not_a_folder

# A generated password stays valid until the member changes it (engine.members: MIN_PASSWORD).
PASSWORD = (
    " (valid until the member changes it at /account), or with --password-stdin read one of "
    "at least 10 characters"
)


def _members(config: Config) -> Any:
    from papersift.engine.members import Members

    if config.data_dir.exists() and not config.data_dir.is_dir():
        raise not_a_folder(config.data_dir)
    if not config.data_dir.is_dir():
        raise PapersiftError(f"no data directory at {config.data_dir}; run `papersift import`")
    return Members(config.data_dir)


def _password(args: argparse.Namespace) -> tuple[str, bool]:
    """(password, generated?)"""
    from papersift.engine.members import new_password

    if not args.password_stdin:
        return new_password(), True
    line = sys.stdin.readline().rstrip("\r\n")
    if not line:
        raise PapersiftError("no password on standard input")
    return line, False


def _researcher(config: Config, rid: int | None) -> None:
    """Check that a researcher id exists (when the store has the researcher tables)."""
    if rid is None:
        return
    from papersift.engine.people import People
    from papersift.engine.store import PaperStore

    path = config.data_dir / "papers.sqlite"
    if not path.is_file():
        return
    store = PaperStore(path, readonly=True)
    try:
        if People(store).get(rid) is None:
            raise PapersiftError(f"there is no researcher {rid}; see /researchers for their ids")
    finally:
        store.close()


def cmd_user(args: argparse.Namespace, config: Config) -> int:
    members = _members(config)
    try:
        if args.action == "list":
            rows = members.all()
            if args.json:
                keys = ("email", "name", "researcher_id", "digest", "confirmed", "created")
                out = [{k: getattr(m, k) for k in keys} for m in rows]
                json.dump(out, sys.stdout, indent=2)
                sys.stdout.write("\n")
            for m in [] if args.json else rows:
                rid = f" researcher {m.researcher_id}" if m.researcher_id else ""
                unconfirmed = "" if m.confirmed else "\tnot confirmed"
                print(f"{m.email}\t{m.name or '-'}\t{m.digest}{rid}{unconfirmed}")
            if not rows and not args.json:
                print("no accounts yet; add one with `papersift user add EMAIL`")
            return 0
        if args.action == "confirm":
            who = members.existing(args.email)
            members.confirm(who.id, who.email)
            print(f"confirmed {who.email}: digests can go to it")
            return 0
        if args.action == "remove":
            gone = members.remove(args.email)
            print(f"removed {gone.email} and their library")
            return 0
        password, generated = _password(args)
        if args.action == "add":
            _researcher(config, args.researcher)
            m = members.add(args.email, password, args.name or "", args.researcher)
            print(f"added {m.email}")
        else:
            m = members.set_password(args.email, password)
            print(f"reset the password of {m.email}; their sessions have ended")
        if generated:
            kind = "initial" if args.action == "add" else "new"
            print(f"{kind} password: {password}")
            print("it stays valid until they change it at /account, as they should")
        return 0
    finally:
        members.close()


def add_parser(
    sub: Any, common: argparse.ArgumentParser, config_of: Callable[[argparse.Namespace], Config]
) -> None:
    """``user`` and its actions; ``--config`` and ``-v`` work before the action or after it."""
    p = sub.add_parser(
        "user",
        parents=[common],
        help="add, list, confirm, remove lab members' accounts or reset a password",
        description="Manage the accounts members sign in with (see /signin).",
    )
    acts = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    a = acts.add_parser(
        "add",
        parents=[common],
        help="create an account (prints a generated password)",
        description=f"Create an account and print a generated password{PASSWORD}.",
    )
    a.add_argument("email", metavar="EMAIL", help="the member's e-mail address")
    a.add_argument("--name", help="the member's name")
    a.add_argument("--researcher", type=int, metavar="ID", help="their researcher profile id")
    r = acts.add_parser(
        "reset",
        parents=[common],
        help="set a new password (prints a generated one); ends their sessions",
        description=f"Set a new password and print it{PASSWORD}; the account's sessions end.",
    )
    r.add_argument("email", metavar="EMAIL", help="the member's e-mail address")
    for q in (a, r):
        q.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password (at least 10 characters) from one line of standard input "
            "instead of printing a generated one",
        )
    c = acts.add_parser(
        "confirm", parents=[common], help="confirm a signed-up address without its mailed link"
    )
    c.add_argument("email", metavar="EMAIL", help="the member's e-mail address")
    d = acts.add_parser("remove", parents=[common], help="delete an account and its library")
    d.add_argument("email", metavar="EMAIL", help="the member's e-mail address")
    ls = acts.add_parser("list", parents=[common], help="list the accounts")
    json_option(ls)
    p.set_defaults(func=lambda args: cmd_user(args, config_of(args)))
