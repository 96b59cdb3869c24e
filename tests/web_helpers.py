"""Helpers for the web tests: pages are parsed, never string-matched."""

from __future__ import annotations

from typing import Any

import lxml.html


def parse_html(text: str) -> Any:
    """The document as an lxml tree (query it with cssselect or XPath)."""
    return lxml.html.document_fromstring(text)
