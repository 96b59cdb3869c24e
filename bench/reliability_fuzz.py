"""API fuzzing, the campaign of ``bench/reliability.py``: schemathesis against a ``papersift
serve`` process on 127.0.0.1, over every operation of its own ``/openapi.json``.

Two phases, both with every schemathesis check on every response (the three documented
cross-parameter rules excused only after ``tests/test_fuzz_api._explained`` re-checks them):

- stateless: each operation's positive and negative strategies, ``examples`` each;
- stateful: schemathesis's state machine over the links it infers between operations
  (a search's paper ids feed the paper, similar, references and citations operations, a
  researcher or institution list feeds their detail operations, ...), ``scenarios``
  scenarios of up to ``steps`` calls each.

The data directory is a real one: sample demo papers imported, embedded and clustered, the
ROR fixture imported and a recorded OpenAlex work applied.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import requests
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.core.failures import FailureGroup

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.corpus import make_config, sample_records, write_jsonl  # noqa: E402
from tests.load_kit import serve  # noqa: E402
from tests.reliability_kit import PAPERSIFT, run  # noqa: E402
from tests.test_fuzz_api import (  # noqa: E402
    MAX_HEAD,
    _explained,
    _head_bytes,
    fuzz,
    over_body_limit,
)

FIXTURES = ROOT / "tests" / "fixtures"


def log(message: str) -> None:
    print(f"[reliability] {message}", file=sys.stderr, flush=True)


def build(root: Path) -> Path:
    """The fuzzed data directory; its config path."""
    make_config(root, embedding={"float32_cache": False})
    config = root / "config.toml"
    base = ["--config", str(config)]
    run([*PAPERSIFT, "import", *base, str(write_jsonl(root / "s.jsonl", sample_records(20)))])
    run([*PAPERSIFT, "index", *base], timeout=1800)
    run([*PAPERSIFT, "import-ror", *base, str(FIXTURES / "ror" / "ror_subset_v2.jsonl.gz")])
    run([*PAPERSIFT, "enrich", *base, "--from-file", str(FIXTURES / "enrich" / "s2_Paper.json")])
    return config


def stateful(
    base_url: str, scenarios: int, steps: int, failures: list[str], rounds: int = 10
) -> Counter[str]:
    """The state machine over the inferred links, in ``rounds`` runs (a failing check ends
    its run and is recorded in ``failures``); counts like ``fuzz`` plus ``linked`` (calls
    whose parameters came from an earlier response) and ``links`` (transitions)."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    spec = httpx.get(f"{base_url}/openapi.json", timeout=60).json()
    counts: Counter[str] = Counter()
    base = schema.as_state_machine()
    counts["links"] = schema.statistic.transitions.total

    class Machine(base):  # type: ignore[valid-type,misc]
        def step(self, input: Any) -> Any:
            counts["linked"] += input.transition is not None and input.is_applied
            return super().step(input)

        def call(self, case: schemathesis.Case[Any], **kwargs: Any) -> Any:
            try:
                response = case.call(base_url=base_url, timeout=60)
            except (requests.ConnectionError, requests.exceptions.ChunkedEncodingError):
                if _head_bytes(case) <= MAX_HEAD:
                    raise
                counts["excused"] += 1  # refused by the HTTP layer, as documented
                case.query = {}  # the same operation without the oversized query string
                response = case.call(base_url=base_url, timeout=60)
            counts["requests"] += 1
            counts[f"{response.status_code // 100}xx"] += 1
            return response

        def validate_response(self, response: Any, case: Any, *args: Any, **kw: Any) -> None:
            try:
                super().validate_response(response, case, *args, **kw)
            except FailureGroup:
                try:
                    body = response.json()
                except ValueError:
                    body = None
                if not (
                    over_body_limit(response) or _explained(case, response.status_code, body, spec)
                ):
                    raise
                counts["excused"] += 1

    for _ in range(rounds):
        try:
            Machine.run(
                settings=settings(
                    max_examples=-(-scenarios // rounds),
                    stateful_step_count=steps,
                    deadline=None,
                    suppress_health_check=list(HealthCheck),
                    database=None,
                )
            )
        except (Exception, FailureGroup) as exc:  # a failing check: the defect to report
            failures.append(f"{type(exc).__name__}: {str(exc)[:1500]}")
    return counts


def fuzz_campaign(root: Path, examples: int, scenarios: int, steps: int) -> dict[str, Any]:
    """Both phases against one server; a failing check ends its phase and is reported."""
    config = build(root)
    out: dict[str, Any] = {"examples": examples, "scenarios": scenarios, "steps": steps}
    with serve(config, root / "serve.log") as url:
        start = time.monotonic()
        failures: list[str] = []
        counts = dict(fuzz(url, examples, derandomize=False, failures=failures))
        out["stateless"] = {"counts": counts, "failure": " / ".join(failures),
                            "seconds": time.monotonic() - start}  # fmt: skip
        log(f"fuzz stateless: {out['stateless']}")
        start, failures = time.monotonic(), []
        counts = dict(stateful(url, scenarios, steps, failures))
        out["stateful"] = {"counts": counts, "failure": " / ".join(failures),
                           "seconds": time.monotonic() - start}  # fmt: skip
        log(f"fuzz stateful: {out['stateful']}")
    served = (root / "serve.log").read_text(errors="replace")
    tracebacks = served.count("Traceback")
    out["server_tracebacks"] = tracebacks
    if tracebacks:  # the first one, with the request line logged before it
        at = served.index("Traceback")
        out["server_traceback"] = served[max(0, at - 600) : at + 3000]
    out["ok"] = not tracebacks and not any(out[p]["failure"] for p in ("stateless", "stateful"))
    return out
