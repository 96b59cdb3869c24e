"""A paper written as a row of the store's table comes back as it was
(``engine.store_rows``), whatever its text: the row encodes authors and extra links as
JSON, read back with orjson."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from papersift.core.paper import Author, Paper
from papersift.engine.store_rows import COLUMNS, SCHEMA, paper_of_row, row_values

# Any text SQLite can hold as UTF-8: every character but lone surrogates.
text = st.text(st.characters(codec="utf-8"), max_size=40)
maybe_text = st.none() | text
ids = st.lists(st.tuples(st.sampled_from(["orcid", "openalex", "s2"]), text), max_size=2)
authors = st.lists(
    st.builds(Author, text, text, ids.map(tuple)), max_size=5
).map(tuple)  # fmt: skip
categories = st.lists(st.from_regex(r"\A[a-z-]{2,8}(\.[A-Z]{2})?\Z"), min_size=1, max_size=3)
papers = st.builds(
    Paper,
    arxiv_id=st.from_regex(r"\A[0-9]{4}\.[0-9]{5}\Z"),
    version=st.integers(1, 30),
    title=text,
    abstract=text,
    authors=authors,
    categories=categories.map(tuple),
    published=st.dates(),
    updated=st.dates(),
    doi=maybe_text,
    journal_ref=maybe_text,
    comments=maybe_text,
    license=maybe_text,
    citation_count=st.none() | st.integers(0, 10**7),
    extra=st.lists(st.tuples(text, text), max_size=3).map(tuple),
)


@settings(max_examples=300, deadline=None)
@given(papers)
def test_a_paper_comes_back_from_its_row_as_it_was(paper: Paper) -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    marks = ", ".join("?" * (len(COLUMNS.split(",")) + 3))
    db.execute(
        f"INSERT INTO papers ({COLUMNS}, record_hash, text_hash, seq) VALUES ({marks})",
        (7, *row_values(paper), "record", "text", 1),
    )
    (row,) = db.execute(f"SELECT {COLUMNS} FROM papers").fetchall()
    assert paper_of_row(row) == paper
    db.close()
