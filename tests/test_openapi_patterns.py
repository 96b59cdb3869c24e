"""The OpenAPI patterns accept exactly what the validation accepts (so schemathesis can hold
the API to them): dates against ``parse_date``, arXiv ids against the paper routes, category
codes against the search parameters (whatever the index holds)."""

from __future__ import annotations

import re

import pytest
from starlette.datastructures import QueryParams

from papersift.core.config_search import SearchConfig
from papersift.server.params import ParamError, parse_date, parse_search
from papersift.server.search_openapi import ARXIV_ID_PATTERN, CATEGORY, DATE_PATTERN
from papersift.server.urls import parse_paper_path

YEARS = ["0000", "0001", "0004", "0100", "0400", "1900", "2000", "2023", "2024", "2100", "9999"]
MONTHS = ["0", "00", "1", "01", "2", "02", "4", "04", "9", "11", "12", "13"]
DAYS = ["0", "00", "1", "01", "9", "28", "29", "30", "31", "32"]
DATES = (
    ["", "24", "20245", "2024-", "2024-1-", "x", "2024/05"]
    + YEARS
    + [f"{y}-{m}" for y in YEARS for m in MONTHS]
    + [f"{y}-{m}-{d}" for y in YEARS for m in MONTHS for d in DAYS]
)


def test_date_pattern_matches_parse_date() -> None:
    for text in DATES:
        try:
            parse_date("from", text, end=False)
            accepted = True
        except ParamError:
            accepted = False
        assert accepted == bool(re.search(DATE_PATTERN, text)), text


@pytest.mark.parametrize(
    "text",
    ["2401.10241", "2401.10241v2", "0704.0001", "arXiv:2401.10241", "ARXIV:2401.10241v3",
     "cmp-lg/9405001", "math.AG/0601001v1", "2401.10241/", "2401.10241V2", "CMP-LG/9405001",
     "math.ag/0601001", "0", "2401.1024", "2401.102411", "2401.10241-slug", "2401.10241.bib",
     "2401.10241.md", "", "/2401.10241", "cs/12345678"],
)  # fmt: skip
def test_arxiv_id_pattern_matches_the_paper_route(text: str) -> None:
    parsed = parse_paper_path(text)
    accepted = parsed is not None and parsed.slug is None and not parsed.ext
    assert accepted == bool(re.search(ARXIV_ID_PATTERN, text))


@pytest.mark.parametrize(
    "text",
    ["cs.IR", "CS.ir", "cs", "hep-th", "physics.acc-ph", "cmp-lg", "cs.IR,cs.LG", " cs.IR , cs ",
     "cs.IR,,cs.LG", ",", "", "\tcs.IR\n", "cs..IR", "cs.", ".IR", "1cs", "cs.IR.x", "cs/IR",
     "cs.IR;cs.LG", "a" * 31, "a" * 32, "cs." + "b" * 30, "cs." + "b" * 31, "cs IR", "-cs"],
)  # fmt: skip
def test_category_pattern_matches_the_search_parameter(text: str) -> None:
    """Syntax only: a code no paper here has is a 400 of its own (the index's list would make
    the document change with every harvest)."""
    try:
        parse_search(QueryParams({"category": text}), SearchConfig())
        accepted = True
    except ParamError:
        accepted = False
    assert accepted == bool(re.search(CATEGORY["pattern"], text)), text
