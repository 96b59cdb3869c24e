"""Paths of the data files shipped inside the package (demo corpus, tokenizer)."""

from __future__ import annotations

import shlex
import sys
from importlib import resources
from pathlib import Path


def package_data() -> Path:
    return Path(str(resources.files("papersift") / "data"))


def demo_corpus_path() -> Path:
    """The bundled demo corpus: 6,267 real arXiv records (6,189 papers) in the snapshot format."""
    return package_data() / "corpus" / "arxiv-demo.jsonl.gz"


def demo_import_hint() -> str:
    """The empty-index hints' example: the command that imports the bundled demo corpus."""
    if getattr(sys, "frozen", False):  # the one-file build's files live only while it runs
        return "(`papersift serve` imports the bundled demo)"
    return f"(the bundled demo: `papersift import {shlex.quote(str(demo_corpus_path()))}`)"


def tokenizer_path() -> Path:
    """The vendored all-MiniLM-L6-v2 tokenizer."""
    return package_data() / "models" / "all-MiniLM-L6-v2" / "tokenizer.json"
