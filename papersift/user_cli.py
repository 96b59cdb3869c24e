"""``papersift user add|list|remove|reset|confirm``: lab members' accounts, by an admin.

``add`` and ``reset`` print a generated password (it stays valid until the member changes
it at /account, so the output says they should), or with ``--password-stdin`` read the
password from standard input (one line), so it never shows in the process list or the
shell's history. ``confirm`` marks a signed-up address as the member's without the mailed
link (e.g. when this server sends no mail). ``remove`` deletes a library too, so it asks
first on a terminal and otherwise wants ``--yes``. ``list`` is a table with a header. Errors
are one line (``papersift.cli`` prints AccountError's message).
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
from papersift.core.wording import counted

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


def table(rows: list[list[str]]) -> str:
    """Rows of cells as columns two spaces apart, each as wide as its widest cell."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)  # fmt: skip


def _list(members: Any, as_json: bool) -> int:
    rows = members.all()
    if as_json:
        keys = ("email", "name", "researcher_id", "digest", "confirmed", "created")
        json.dump([{k: getattr(m, k) for k in keys} for m in rows], sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif not rows:
        print("no accounts yet; add one with `papersift user add EMAIL`")
    else:  # "digest off" rather than a bare "off"; whether digests can go to the address
        head = ["email", "name", "confirmed", "digest", "researcher", "created"]
        print(table([head, *([m.email, m.name or "-", "yes" if m.confirmed else "no",
                              m.digest, str(m.researcher_id or "-"), m.created[:10]]
                             for m in rows)]))  # fmt: skip
    return 0


def _remove(members: Any, args: argparse.Namespace) -> int:
    """Delete an account and its library, once the admin said yes (``--yes``, or asked on
    the terminal): it deleted a member's library at the first word."""
    from papersift.engine.library import Library

    who = members.existing(args.email)
    if not args.yes:
        saved = counted(len(Library(members).all_saved(who.id)), "saved paper")
        what = f"{who.email}{f' ({who.name})' if who.name else ''} and their library ({saved})"
        if not sys.stdin.isatty():
            raise PapersiftError(f"`user remove` deletes {what}: add --yes to confirm "
                                 "(standard input is no terminal to ask on)")  # fmt: skip
        print(f"remove {what}? [y/N] ", end="", file=sys.stderr, flush=True)
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            print(f"nothing removed: {who.email} keeps the account and library")
            return 1
    gone = members.remove(who.email)
    print(f"removed {gone.email} and their library")
    return 0


def cmd_user(args: argparse.Namespace, config: Config) -> int:
    members = _members(config)
    try:
        if args.action == "list":
            return _list(members, args.json)
        if args.action == "confirm":
            who = members.existing(args.email)
            if who.confirmed:
                print(f"{who.email} is already confirmed: digests can go to it")
                return 0
            members.confirm(who.id, who.email)
            print(f"confirmed {who.email}: digests can go to it")
            return 0
        if args.action == "remove":
            return _remove(members, args)
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
    d = acts.add_parser(
        "remove",
        parents=[common],
        help="delete an account and its library (asks first)",
        description="Delete an account and its library; asks on the terminal first.",
    )
    d.add_argument("email", metavar="EMAIL", help="the member's e-mail address")
    d.add_argument("--yes", action="store_true",
                   help="do not ask (needed when standard input is no terminal)")  # fmt: skip
    ls = acts.add_parser("list", parents=[common], help="list the accounts")
    json_option(ls)
    p.set_defaults(func=lambda args: cmd_user(args, config_of(args)))
