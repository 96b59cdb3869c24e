"""What the ``papersift`` commands share: their common options and the config a command
line names, the argument types argparse checks (a bad value is argparse's one-line error),
the search and harvest options, free text that begins with '-', the data directory opened to
write, and JSON output."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.core.config import Config
from papersift.core.config_load import load_config
from papersift.core.config_search import SearchConfig

CONFIG_HELP = (
    "config file (default: $PAPERSIFT_CONFIG, else ./config.toml if there is one, else the "
    "built-in defaults); PAPERSIFT_<SECTION>_<KEY> variables override it"
)
JSON_HELP = "print the result as JSON"


def common_options(*, top: bool = False) -> argparse.ArgumentParser:
    """``--config`` and ``-v``, as a parent parser: of the main parser (``top``), which holds
    their defaults, and of every command and ``user`` action, which take them with no
    default, so that they work before the command and after it (``papersift --config X
    stats``, ``papersift stats --config X``; after it wins). argparse sets a subparser's
    defaults over what the main parser read: a default there would undo ``--config X``."""
    common = argparse.ArgumentParser(add_help=False)
    config, verbose = (None, False) if top else (argparse.SUPPRESS, argparse.SUPPRESS)
    common.add_argument("--config", metavar="PATH", default=config, help=CONFIG_HELP)
    common.add_argument("-v", "--verbose", action="store_true", default=verbose,
                        help="log more detail")  # fmt: skip
    return common


def json_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help=JSON_HELP)


if TYPE_CHECKING:
    from papersift.engine.datadir import DataDir


def config_path(args: argparse.Namespace) -> str | None:
    """``--config``, else ``PAPERSIFT_CONFIG``, else ./config.toml if there is one (None:
    the defaults). An empty one counts as not given, as an empty variable usually does."""
    path: str | None = args.config or os.environ.get("PAPERSIFT_CONFIG") or None
    if path is None and Path("config.toml").is_file():
        path = "config.toml"
    return path


def config_of(args: argparse.Namespace) -> Config:
    """The config the command line names (``config_path``)."""
    return load_config(config_path(args))


@contextmanager
def writing_to(config: Config, command: str, *, create: bool = True) -> Iterator[DataDir]:
    """The data directory opened for ``papersift COMMAND`` to write, under its writer lock
    (one writer at a time; a second is told who holds it). A command opens it once its
    arguments are checked, so one refused creates nothing; ``create=False``: it must hold
    an index already (``index``, ``reindex``, ``enrich``)."""
    from papersift.engine.datadir import DataDir, check_root
    from papersift.engine.writer_lock import writer_lock

    check_root(config, create=create)
    lock = writer_lock(config.data_dir, f"`papersift {command}`")
    with lock, DataDir(config, create=create) as data:
        yield data


def full_date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def partial_date(text: str, *, end: bool) -> date:
    from papersift.core.dates import DATE_FORMS, parse_partial_date

    try:
        return parse_partial_date(text.strip(), end=end)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date such as {DATE_FORMS}: {text!r}") from None


def date_from(text: str) -> date:
    """``--from``: as the web's ``from``, ``2020`` is 2020-01-01."""
    return partial_date(text, end=False)


def date_to(text: str) -> date:
    """``--to``: as the web's ``to``, ``2020`` is 2020-12-31."""
    return partial_date(text, end=True)


def port_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a port number from 1 to 65535: {text!r}")
    return value


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1: {text!r}")
    return value


def text_last(
    argv: Sequence[str],
    commands: Mapping[str, argparse.ArgumentParser],
    top: argparse.ArgumentParser | None = None,
) -> list[str]:
    """``argv`` with the free text of one of ``commands`` moved behind ``--`` when it begins
    with '-' and is none of that command's options: ``search "-vision transformer"`` (the
    query syntax's exclusion) is then the query, where argparse would take ``-vision`` for
    ``-v`` with a value. Options before it are left as they are; those of the main parser
    ``top`` may come before the command (``--config X search ...``)."""
    args = list(argv)
    at = _command_at(args, top._option_string_actions if top is not None else {})
    if at is None or args[at] not in commands:
        return args
    options = commands[args[at]]._option_string_actions
    flags = {name[1] for name, a in options.items() if len(name) == 2 and a.nargs == 0}
    i = at + 1
    while i < len(args):
        arg = args[i]
        if arg == "--" or not arg.startswith("-") or arg == "-":
            return args  # the text comes as it is, or argparse reads the rest
        action = _option(arg, options)
        if arg.startswith("--") or action is not None or set(arg[1:]) <= flags:
            # An option (argparse says so if it is unknown or ambiguous); skip its value.
            takes_value = action is not None and action.nargs != 0 and "=" not in arg
            i += 2 if takes_value else 1
            continue
        return [*args[:i], *args[i + 1 :], "--", arg]
    return args


def _option(arg: str, options: Mapping[str, argparse.Action]) -> argparse.Action | None:
    """The option ``arg`` names, as argparse reads it (``--page-s`` for ``--page-size``)."""
    name = arg.partition("=")[0]
    action = options.get(name)
    if action is None and name.startswith("--"):  # argparse's abbreviations
        close = {id(a): a for o, a in options.items() if o.startswith(name)}
        action = next(iter(close.values())) if len(close) == 1 else None
    return action


def _command_at(args: Sequence[str], options: Mapping[str, argparse.Action]) -> int | None:
    """Where the command is in ``args``: past the main parser's ``options`` and their
    values (``--config X``); None if there is none."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == "--":
            return None
        if not arg.startswith("-") or arg == "-":
            return i
        action = _option(arg, options)
        i += 2 if action is not None and action.nargs != 0 and "=" not in arg else 1
    return None


def add_search_options(
    p: argparse.ArgumentParser, modes: Sequence[str], sorts: Sequence[str]
) -> None:
    """``search``'s filters, order and paging, with the defaults of the settings they
    fall back on."""
    d = SearchConfig()
    p.add_argument(
        "--mode", choices=modes, help=f"default: [search] default_mode ({d.default_mode})"
    )
    p.add_argument(
        "--category",
        action="append",
        metavar="CAT",
        help="only papers in CAT, in any case; an archive such as cs matches all cs.* "
        "(repeatable: papers in any of them); one no paper has is an error",
    )
    p.add_argument(
        "--researcher",
        action="append",
        metavar="NAME",
        help="only papers by NAME, compared as au: compares names (repeatable: by all of them)",
    )
    p.add_argument(
        "--from",
        dest="date_from",
        type=date_from,
        metavar="YYYY[-MM[-DD]]",
        help="published on or after this date (a year or month: from its first day)",
    )
    p.add_argument(
        "--to",
        dest="date_to",
        type=date_to,
        metavar="YYYY[-MM[-DD]]",
        help="published on or before this date (a year or month: to its last day)",
    )
    p.add_argument("--sort", choices=sorts, default="relevance", help="default: %(default)s")
    p.add_argument(
        "--page",
        type=positive,
        default=1,
        metavar="N",
        help="page of results, from 1 (default: %(default)s); a page past the last says so; "
        f"page x page size may pass [search] max_window ({d.max_window}) only when the "
        "list ends before it",
    )
    p.add_argument(
        "--page-size",
        type=positive,
        metavar="N",
        help=f"results per page (default: [search] page_size, {d.page_size}; at most "
        f"[search] max_page_size, {d.max_page_size})",
    )
    p.add_argument(
        "--no-autocorrect",
        dest="autocorrect",
        action="store_false",
        help="search the query as typed even when no paper matches it (by default such a "
        "query's did-you-mean suggestion is searched instead, when that matches)",
    )


def add_harvest_window(p: argparse.ArgumentParser) -> None:
    """``harvest --from/--until``: the days whose changes to ask the source for."""
    p.add_argument(
        "--from",
        dest="date_from",
        type=full_date,
        metavar="YYYY-MM-DD",
        help="records changed on or after this day (default: where the last run ended; the "
        "first time, the newest paper's update)",
    )
    p.add_argument(
        "--until",
        type=full_date,
        metavar="YYYY-MM-DD",
        help="records changed on or before this day (default: up to now; a run with --until "
        "leaves where the next one starts as it was)",
    )


def print_json(data: Any) -> None:
    """``data`` (builtins or msgspec Structs) as indented UTF-8 JSON on stdout."""
    import msgspec

    sys.stdout.write(msgspec.json.format(msgspec.json.encode(data), indent=2).decode() + "\n")
