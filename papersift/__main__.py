"""``python -m papersift`` runs the CLI (and is the one-file executable's entry point)."""

import multiprocessing

from papersift.cli import main

if __name__ == "__main__":
    # The importer parses in a spawned child (indexer.parse_worker); in the frozen
    # executable that child starts this same program, which must hand it over first.
    multiprocessing.freeze_support()
    raise SystemExit(main())
