"""``papersift enrich``, ``import-ror`` and ``match-affiliation``: what enrichment adds to
the papers (citations, author ids, institutions) and the ROR registry it matches against."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from papersift.cli_args import config_of, json_option, positive, print_json, writing_to
from papersift.core.errors import PapersiftError
from papersift.core.wording import counted

if TYPE_CHECKING:
    from papersift.engine.datadir import DataDir


def cmd_enrich(args: argparse.Namespace) -> int:
    from papersift.indexer.enrich_run import enrich_files, enrich_online

    _ids_or_files(args.ids or (), args.from_file or ())
    requests = cached = 0
    with writing_to(config_of(args), "enrich", create=False) as data:
        _check_ids(data, args.ids or ())
        if args.from_file:
            report = enrich_files(data, [Path(f) for f in args.from_file])
        else:
            report, requests, cached = enrich_online(
                data,
                arxiv_ids=args.ids or (),
                limit=args.limit,
                progress=not args.json and sys.stderr.isatty(),
            )
    if args.json:
        print_json({**report.as_json(), "requests": requests, "cached": cached})
    else:
        asked = (
            f" ({counted(requests, 'request')}, {cached:,} from the cache, "
            f"{report.not_found:,} not found)"
        )
        print(report.line() + ("" if args.from_file else asked))
    for line in report.warnings:  # a source that found nothing (also in the JSON)
        print(f"warning: {line}", file=sys.stderr)
    return 0


def _ids_or_files(ids: Sequence[str], files: Sequence[str]) -> None:
    """One of the two: ids beside ``--from-file`` were checked, then ignored, and an id after
    it was read as a file ("no such file: 2401.10241")."""
    from papersift.core.paper import parse_arxiv_id

    stray = [f for f in files if not Path(f).exists() and parse_arxiv_id(f)]
    if files and (ids or stray):
        named = f" ({stray[0]!r} is an arXiv id, not a file)" if stray else ""
        raise PapersiftError(f"give either arXiv ids or --from-file FILE..., not both{named}")


def _check_ids(data: DataDir, ids: Sequence[str]) -> None:
    """Ids that are no arXiv id or not in the index, as one line (they were enriched as
    nothing, silently: "0 records")."""
    from papersift.core.paper import parse_arxiv_id

    parsed = {raw: parse_arxiv_id(raw) for raw in ids}
    bad = [raw for raw, p in parsed.items() if p is None]
    if bad:
        raise PapersiftError(f"not an arXiv id: {bad[0][:60]!r} (such as 2401.10241)")
    absent = [raw for raw, p in parsed.items() if p and data.store.docid_of(p[0]) is None]
    if absent:
        shown = ", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
        raise PapersiftError(f"not in this index: {shown}; add them first (`papersift add ID...`)")


def cmd_import_ror(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from papersift.engine.institutions import Institutions
    from papersift.engine.ror import read_ror

    config = config_of(args)
    path = Path(args.file)
    if path.is_dir():
        raise PapersiftError(f"{path} is a directory; name the ROR data file in it")
    if not path.is_file():
        raise PapersiftError(f"no such file: {path}")
    skipped: list[str] = []
    orgs = read_ror(path, skipped)  # a file that is no ROR data is refused here, first
    with writing_to(config, "import-ror") as data:
        registry = Institutions(data.store)
        before = registry.count()
        with tqdm(unit="org", desc="ror", disable=args.json or not sys.stderr.isatty()) as bar:
            read = registry.import_organisations(bar.update(1) or org for org in orgs)
        total, listed = registry.count(), registry.count(listed=True)
    if args.json:
        print_json({"read": read, "added": total - before, "institutions": total,
                     "listed": listed, "skipped": skipped})  # fmt: skip
    else:
        withdrawn = (
            f", {listed:,} listed ({total - listed:,} withdrawn: kept to resolve their ids)"
            if listed < total else ""
        )  # fmt: skip
        print(f"{counted(read, 'organisation')} read, {total - before:,} new; "
              f"{counted(total, 'institution')} in the index{withdrawn}"
              + (f"; {counted(len(skipped), 'record')} skipped (see the log)" if skipped
                 else ""))  # fmt: skip
    return 0


def cmd_match_affiliation(args: argparse.Namespace) -> int:
    from papersift.engine.affiliation_match import as_json, explain
    from papersift.engine.datadir import DataDir
    from papersift.engine.institutions import Institutions

    if not args.text.strip():  # it answered "no match", as if there had been something
        raise PapersiftError('the affiliation text is empty; give one, e.g. "Dept. of '
                             'Physics, University of Oxford, UK"')  # fmt: skip
    data = DataDir(config_of(args), create=False)  # reads only: makes no empty index
    try:
        found = explain(Institutions(data.store), args.text)
    except ValueError as exc:
        raise PapersiftError(str(exc)) from None
    finally:
        data.close()
    out = as_json(found)
    if args.json:
        print_json(out)
    elif out.match is None:
        print(f"no match: {out.reason}")
    else:
        m = out.match
        print(f"{m.ror}  {m.name}\n  {m.how} match: {out.reason}")
    return 0


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The three commands' parsers, under ``sub``."""
    p = sub.add_parser(
        "import-ror",
        parents=[common],
        help="import the ROR registry (institutions)",
        description='Import the ROR registry from its data dump (Zenodo, the "ROR Data" '
        "community): the .zip as it is, or its schema v2 JSON (a JSON array or JSON lines), "
        "plain, .gz or .xz. A file that is no ROR data is refused; a failed import changes "
        "nothing.",
    )
    p.add_argument("file", metavar="FILE", help="the ROR data dump (.zip, .json, .jsonl, .gz, .xz)")
    json_option(p)
    p.set_defaults(func=cmd_import_ror)

    p = sub.add_parser(
        "match-affiliation",
        parents=[common],
        help="match a raw affiliation string to a ROR id, and say why",
        description="Match TEXT (as a paper prints an affiliation) against the imported ROR "
        "registry with the matcher enrichment uses; no match rather than a wrong one.",
    )
    p.add_argument(
        "text",
        metavar="TEXT",
        help='the affiliation, e.g. "Dept. of Physics, University of Oxford, UK" (quoted)',
    )
    json_option(p)
    p.set_defaults(func=cmd_match_affiliation)

    p = sub.add_parser(
        "enrich",
        parents=[common],
        help="add citation counts, author ids and institutions (OpenAlex, Semantic Scholar)",
        description="Ask [enrich] openalex_url and semanticscholar_url about the papers "
        "(cached), or read saved work JSON with --from-file.",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="only these arXiv ids (default: all)")
    p.add_argument(
        "--from-file",
        nargs="+",
        metavar="FILE",
        help="read saved OpenAlex work / Semantic Scholar paper JSON instead of asking (not "
        "with IDs)",
    )
    p.add_argument("--limit", type=positive, help="ask about at most N papers")
    json_option(p)
    p.set_defaults(func=cmd_enrich)
