"""API fuzzing with schemathesis: every operation of our own ``/openapi.json``, over real HTTP.

The app runs in a real uvicorn server on 127.0.0.1 (``live_url``). Each generated request
(schema-valid and schema-violating ones) must get no 5xx and a response that conforms to the
documented status codes, content type, headers and schema. CI runs a bounded smoke
(``FUZZ_EXAMPLES``, default 30 per operation and mode); ``bench/reliability.py`` runs
thousands against a ``papersift serve`` process of its own (``FUZZ_URL``).

schemathesis's own pytest plugin does not run under pytest 9 (it reaches for a removed
``Function._nodeid``), so the operations' Hypothesis strategies are driven directly.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.core.result import Err
from schemathesis.specs.openapi import checks

pytest_plugins = ["tests.web_fixtures"]

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "30"))
# Not failures of the promise "no 5xx, no response outside the schema": the parameter schemas
# are looser than the validation (e.g. ``page`` has no documented maximum, so a schema-valid
# page 10001 gets a documented 400); the admin API answers 404 while no token is set; and an
# empty query parameter (``sort=``, ``from=``, as HTML forms submit them) deliberately means
# "not given", which schemathesis counts as accepting a value outside the enum or format.
LENIENT = [
    checks.positive_data_acceptance,
    checks.missing_required_header,
    checks.negative_data_rejection,
]


def fuzz(base_url: str, examples: int, derandomize: bool = True) -> Counter[str]:
    """Fuzz every operation; returns counts (``requests``, ``<status class>``); raises on
    the first failing check."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
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
                response = case.call_and_validate(
                    base_url=base_url, timeout=60, excluded_checks=LENIENT
                )
                counts["requests"] += 1
                counts[f"{response.status_code // 100}xx"] += 1

            try:
                check()
            except Unsatisfiable:  # no schema-violating request exists (e.g. any string id)
                continue
            except Exception as exc:
                raise AssertionError(f"{operation.method.upper()} {operation.path}: {exc}") from exc
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
