"""Property-based tests: arbitrary input to the parsers never raises an unhandled error.

Profiles: ``ci`` (the default, 200 examples) and ``thorough`` (``HYPOTHESIS_PROFILE=thorough``,
used by ``bench/reliability.py``). The search properties run against the session engine.
"""

from __future__ import annotations

import os
import re
import string
from datetime import date
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papersift.core.authors import normalise_name, parse_authors
from papersift.core.errors import QueryError
from papersift.core.paper import Paper, parse_arxiv_id, version_number
from papersift.core.urls import slugify
from papersift.engine.query import FIELD_ALIASES, arxiv_id_in, parse_user_query
from papersift.engine.results import SearchRequest
from papersift.engine.search import SearchEngine
from papersift.indexer.snapshot import record_to_paper
from papersift.server.params import ParamError
from papersift.server.urls import parse_paper_path
from tests.search_checks import assert_consistent

settings.register_profile(
    "ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "thorough", max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

# Text biased towards the query grammar's own characters, plus anything Unicode.
GRAMMAR = " \"+-:()[]{}^~*\\/.,;'’<>&|!?"
query_text = st.one_of(
    st.text(max_size=200),
    st.lists(
        st.one_of(
            st.sampled_from([*FIELD_ALIASES, "AND", "OR", "NOT", "foo", "arxiv", "2401.10241"]),
            st.text(alphabet=GRAMMAR + string.ascii_letters, max_size=6),
            st.text(max_size=4),
        ),
        max_size=20,
    ).map(lambda parts: " ".join(parts) if len(parts) % 2 else "".join(parts)),
)


@given(query_text)
def test_parse_user_query_never_raises(query: str) -> None:
    parsed = parse_user_query(query)
    for clause in parsed.clauses:
        assert clause.sign in ("", "+", "-")
        assert clause.field in (None, "ti", "au", "abs", "cat")
        assert clause.text and clause.text == clause.text.strip()
    tantivy = " ".join(c.tantivy_string({"cs.ir": "cs.IR"}) for c in parsed.clauses)
    # Every value is re-quoted: quotes come in pairs and no backslash survives.
    assert tantivy.count('"') % 2 == 0 and "\\" not in tantivy
    assert isinstance(parsed.semantic_text, str)


@given(query_text)
def test_arxiv_id_in_is_an_id_or_none(query: str) -> None:
    found = arxiv_id_in(query)
    assert found is None or parse_arxiv_id(found) == (found, None)


@given(
    st.from_regex(r"\A(?:[0-9]{4}\.[0-9]{4,5}|[a-z]{2,8}(?:-[a-z]{2,5})?/[0-9]{7})(?:v[1-9])?\Z")
)
def test_arxiv_id_in_finds_well_formed_ids(text: str) -> None:
    parsed = parse_arxiv_id(text)
    if parsed is not None:  # e.g. a month 13 is not an id
        for form in (text, f"arXiv:{text}", f"https://arxiv.org/abs/{text}", f"  {text}  "):
            assert arxiv_id_in(form) == parsed[0]


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_search_never_raises_but_query_error(engine: SearchEngine, mode: str) -> None:
    @settings(max_examples=max(10, settings().max_examples // 4))
    @given(
        query=query_text,
        page=st.integers(1, 3) | st.integers(-2, 200),
        size=st.none() | st.integers(-1, 150),
    )
    def check(query: str, page: int, size: int | None) -> None:
        request = SearchRequest(query=query, mode=mode, page=page, page_size=size)  # type: ignore[arg-type]
        try:
            result = engine.search(request)
        except QueryError:
            return
        assert_consistent(engine, result)

    check()


# --- the paper-path router ---------------------------------------------------------------

path_text = st.one_of(
    st.text(max_size=120),
    st.from_regex(
        r"\A(?:arxiv:)?(?:[0-9]{4}\.[0-9]{4,6}|[a-zA-Z-]{1,10}(?:\.[A-Z]{2})?/[0-9]{6,8})"
        r"(?:v[0-9]{1,3})?(?:-[a-z0-9-]{0,30})?(?:\.bib|\.md|\.BIB|\.pdf)?/?\Z"
    ),
)


@given(path_text)
def test_parse_paper_path_never_raises(rest: str) -> None:
    """Only ParamError (a 400), and only for a version out of range, such as v0."""
    try:
        parsed = parse_paper_path(rest)
    except ParamError as exc:
        assert exc.parameter == "version"
        m = re.search(r"[0-9][vV]([0-9]+)(?:[-./]|\Z)", rest)
        assert m is not None and version_number(m.group(1)) is None, rest
        return
    if parsed is not None:
        assert parse_arxiv_id(parsed.arxiv_id) == (parsed.arxiv_id, None)
        assert parsed.ext in ("", ".bib", ".md")
        assert parsed.version is None or parsed.version >= 0


@given(st.text(max_size=300))
def test_slugify_is_short_ascii_and_routes_back(title: str) -> None:
    slug = slugify(title)
    assert slug and len(slug) <= 80 and slug.isascii()
    assert set(slug) <= set(string.ascii_lowercase + string.digits + "-")
    parsed = parse_paper_path(f"2401.10241-{slug}")
    assert parsed is not None and parsed.slug == slug and parsed.arxiv_id == "2401.10241"


# --- the author-name splitter ------------------------------------------------------------

AUTHORISH = string.ascii_letters + " ,.;&()^{}\\'`\"~-<>/0123456789éøß"
author_text = st.one_of(
    st.text(max_size=300),
    st.text(alphabet=AUTHORISH, max_size=300),
    st.lists(st.sampled_from(["and", "et al", "others", "\\'e", '{\\"o}', "(MIT)", "^1"])).map(
        " ".join
    ),
)
parsed_authors = st.none() | st.lists(
    st.lists(st.one_of(st.text(max_size=20), st.none(), st.integers()), max_size=4),
    max_size=8,
)


@given(author_text, parsed_authors)
def test_parse_authors_never_raises(raw: str, parsed: list[list[Any]] | None) -> None:
    authors = parse_authors(raw, parsed)
    for author in authors:
        assert author.name and isinstance(author.key, str)
        assert author.key == normalise_name(author.name)


# --- the snapshot importer ---------------------------------------------------------------

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # invalid in XML feeds, noise in pages

json_scalar = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30)


def _containers(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)


json_value = st.recursive(json_scalar, _containers, max_leaves=12)
id_value = st.one_of(
    json_value,
    st.sampled_from(["2401.10241", "2401.10241v3", "hep-th/9901001", "0704.0001", "1306.25"]),
    st.floats(min_value=700, max_value=3000),
)
date_value = st.one_of(
    json_value,
    st.sampled_from(["2024-01-18", "Mon, 2 Apr 2007 19:18:42 GMT", "2024-02-30", "0000-00-00"]),
)
version_entry = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {
            "version": st.one_of(json_value, st.sampled_from(["v1", "v2", "v99999999999"])),
            "created": date_value,
        }
    ),
)
record = st.fixed_dictionaries(
    {},
    optional={
        "id": id_value,
        "title": st.one_of(json_value, st.text(max_size=200)),
        "abstract": json_value,
        "authors": st.one_of(json_value, author_text),
        "authors_parsed": json_value,
        "categories": st.one_of(json_value, st.sampled_from(["cs.IR cs.CL", "hep-th", " "])),
        "versions": st.one_of(json_value, st.lists(version_entry, max_size=4)),
        "update_date": date_value,
        "doi": json_value,
        "journal-ref": json_value,
        "comments": json_value,
        "license": json_value,
    },
)


@given(record)
def test_record_to_paper_raises_only_value_error(obj: dict[str, Any]) -> None:
    try:
        paper = record_to_paper(obj)
    except ValueError:
        return
    assert isinstance(paper, Paper)
    assert paper.title and paper.version >= 1
    assert isinstance(paper.published, date) and paper.published <= paper.updated
    shown = [paper.title, paper.abstract, *(a.name for a in paper.authors)]
    assert not any(CONTROL.search(text) for text in shown), "a control character was kept"
