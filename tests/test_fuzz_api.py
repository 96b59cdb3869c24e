"""API fuzzing with schemathesis: every operation of our own ``/openapi.json``, over real HTTP.

The app runs in a real uvicorn server on 127.0.0.1 (``live_url``). Each generated request
(schema-valid and schema-violating ones) must get no 5xx and a response that conforms to the
documented status codes, content type, headers and schema; schema-valid requests must be
accepted and schema-violating ones rejected. CI runs a bounded smoke
(``FUZZ_EXAMPLES``, default 30 per operation and mode); ``bench/reliability.py`` runs
thousands against a ``papersift serve`` process of its own (``FUZZ_URL``).

schemathesis's own pytest plugin does not run under pytest 9 (it reaches for a removed
``Function._nodeid``), so the operations' Hypothesis strategies are driven directly.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from typing import Any
from urllib.parse import urlencode

import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from jsonschema import Draft202012Validator
from schemathesis import GenerationMode
from schemathesis.core.failures import FailureGroup
from schemathesis.core.result import Err

from papersift.core.config_search import SearchConfig
from papersift.server.graph_api import body_limit
from papersift.server.http_protocol import MAX_HEAD as HEAD_LIMIT
from papersift.server.params import clean_text, parse_date

pytestmark = pytest.mark.slow  # left out by `make test-fast`

pytest_plugins = ["tests.web_fixtures"]

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))
# Every check is on. The parameter schemas document the validation exactly, except for four
# rules JSON Schema cannot state, which each failure is checked against before it is excused:
# the result window (``page`` x ``page_size``), ``from`` after ``to``, filter values that
# repeat (they count once against ``maxItems``), and a category or institution no paper in
# the index has (the schema gives their form; the index's own lists change with every
# harvest, and the session's index has no institution). Anything else fails.
# The server refuses a request head over 64 KB before the app sees it (431 and the connection
# closed: server/http_protocol.py), so a query string that long is refused or cut off with
# the connection: excused, as that one rule.
MAX_HEAD = HEAD_LIMIT - 512  # less a margin for the request line and headers
MAX_TEXT_LENGTH = SearchConfig().max_text_length  # the fuzzed servers use the default
_WINDOW = re.compile(r"with (\d+) per page at most ([\d,]+) pages? can be reached")
_NOT_HELD = re.compile(r"Unknown (institution|category) '(.+)': no paper in this index has it\.")
_FILTERS = ("category", "researcher", "researcher_id", "institution")
# Operations that read the search parameters (server.params.parse_search).
_SEARCHES = (
    "/api/v1/search", "/api/v1/papers/{id}/references", "/api/v1/papers/{id}/citations",
    "/api/v1/export",
)  # fmt: skip


def _head_bytes(case: schemathesis.Case[Any]) -> int:
    """About how many bytes the request line of ``case`` takes (path and query string)."""
    query = urlencode(case.query or {}, doseq=True)
    return len(case.formatted_path.encode()) + len(query.encode())


def over_body_limit(response: Any) -> bool:
    """A 413 for a body over the documented size limit (a schema-violating body can be far
    larger than any valid one): the server rejected it, just not with a 4xx schemathesis
    expects."""
    sent = response.request.body or b""
    return response.status_code == 413 and len(sent) > body_limit(MAX_TEXT_LENGTH)


def _explained(case: schemathesis.Case[Any], status: int, body: Any, spec: Any) -> bool:
    """Whether every failure of ``case`` is one of the documented cross-parameter rules, or
    the HTTP layer's limit on a request head."""
    if status == 431:
        return _head_bytes(case) > MAX_HEAD
    q = dict(case.query or {})
    if isinstance(case.body, dict):  # POST /api/v1/similar and /recommend: the same rules
        q.update(case.body)
    if status == 400 and isinstance(body, dict):  # a schema-valid request rejected
        err = body.get("error", {})
        if err.get("parameter") == "text":  # only whitespace or control characters
            return not clean_text(str(q.get("text", "")))
        unknown = _NOT_HELD.match(err.get("message", ""))
        if unknown and err.get("parameter") == unknown.group(1):
            sent = q.get(unknown.group(1))
            values = sent if isinstance(sent, list) else [sent]
            return unknown.group(2) in {x.strip() for v in values for x in str(v).split(",")}
        window = _WINDOW.search(err.get("message", ""))
        if err.get("parameter") == "page" and window:
            size, last = int(window.group(1)), int(window.group(2).replace(",", ""))
            given = q.get("page_size")
            return int(q["page"]) > last and (given in (None, "") or int(given) == size)
        if err.get("parameter") == "from" and "after 'to'" in err.get("message", ""):
            start = parse_date("from", str(q["from"]), end=False)
            stop = parse_date("to", str(q["to"]), end=True)
            return start is not None and stop is not None and start > stop
        return False
    if 200 <= status < 300 and case.path in _SEARCHES:  # a violating one accepted
        params = {p["name"]: p for p in spec["paths"][case.path]["get"]["parameters"]}
        deduped = {}
        for name, value in q.items():
            if name in _FILTERS:  # on the wire one value is a one-item list
                items = value if isinstance(value, list) else [value]
                parts = [str(v) for v in items] if name == "researcher" else [
                    x for v in items for x in str(v).split(",")]  # fmt: skip
                value = list(dict.fromkeys(v for v in parts if v.strip()))
                if name == "researcher_id":
                    value = [int(v) if v.strip().isdecimal() else v for v in value]
            deduped[name] = value
        return all(
            name in params and Draft202012Validator(params[name]["schema"]).is_valid(value)
            for name, value in deduped.items()
        )
    return False


def fuzz(
    base_url: str, examples: int, derandomize: bool = True, failures: list[str] | None = None
) -> Counter[str]:
    """Fuzz every operation; returns counts (``requests``, ``<status class>``, ``excused``);
    raises on the first failing check, or with ``failures`` records it there and goes on
    with the next operation."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    spec = httpx.get(f"{base_url}/openapi.json", timeout=60).json()
    counts: Counter[str] = Counter()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            raise AssertionError(f"our OpenAPI document is invalid: {result.err()}")
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(
                max_examples=examples,
                deadline=None,
                suppress_health_check=list(HealthCheck),
                derandomize=derandomize,
                database=None,
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case: schemathesis.Case[Any]) -> None:
                try:
                    response = case.call(base_url=base_url, timeout=60)
                except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                    if _head_bytes(case) <= MAX_HEAD:
                        raise
                    counts["excused"] += 1  # refused by the HTTP layer, as documented
                    return
                counts["requests"] += 1
                counts[f"{response.status_code // 100}xx"] += 1
                try:
                    case.validate_response(response)
                except FailureGroup:
                    try:
                        body = response.json()
                    except ValueError:
                        body = None
                    if not (
                        over_body_limit(response)
                        or _explained(case, response.status_code, body, spec)
                    ):
                        raise
                    counts["excused"] += 1

            try:
                check()
            except Unsatisfiable:  # no schema-violating request exists (e.g. any string id)
                continue
            except (Exception, FailureGroup) as exc:
                where = f"{operation.method.upper()} {operation.path} ({mode.value})"
                if failures is None:
                    raise AssertionError(f"{where}: {exc}") from exc
                failures.append(f"{where}: {str(exc)[:1500]}")
            counts["operations"] += mode is GenerationMode.POSITIVE
    return counts


def test_every_operation_survives_fuzzing(live_url: str) -> None:
    counts = fuzz(live_url, EXAMPLES)
    assert counts["5xx"] == 0
    assert counts["operations"] >= 10 and counts["2xx"] > 0 and counts["4xx"] > 0


@pytest.mark.skipif("FUZZ_URL" not in os.environ, reason="campaign only (bench/reliability.py)")
def test_campaign() -> None:
    counts = fuzz(os.environ["FUZZ_URL"], EXAMPLES, derandomize=False)
    out = os.environ.get("FUZZ_REPORT")
    if out:
        with open(out, "w", encoding="utf-8") as fh:
            json.dump(dict(counts), fh)
    assert counts["5xx"] == 0
