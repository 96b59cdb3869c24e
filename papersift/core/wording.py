"""Counts in the CLI's lines as a person writes them: thousands separated ("2,000 papers",
as the progress lines print them) and the noun singular for one ("1 record", not "1
records")."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """``counted(1, "record")`` -> ``1 record``; ``counted(2000, "paper")`` -> ``2,000
    papers``; ``plural`` for a noun that does not take an s."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
