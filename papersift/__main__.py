"""``python -m papersift`` runs the CLI."""

from papersift.cli import main

raise SystemExit(main())
