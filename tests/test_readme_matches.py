"""The README against the code it describes: every JSON API route and search parameter in
its "JSON API" tables, every field the CLI's `--json` prints in its list of them (cheap
guards, as tests/test_config.py keeps the settings table)."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
from starlette.routing import Route

from papersift.core.config import Config
from papersift.engine import serialize
from papersift.engine.search import open_engine
from papersift.server.app import create_app
from papersift.server.params import SEARCH_PARAMS

README = (Path(__file__).resolve().parent.parent / "README.md").read_text("utf-8")


def section(title: str) -> str:
    """The README's text from the heading ``## title`` to the next ``## ``."""
    start = README.index(f"\n## {title}\n")
    end = README.find("\n## ", start + 1)
    return README[start : end if end != -1 else None]


def as_documented(route: Route) -> str:
    """``GET /api/v1/papers/<id>`` for the route ``/api/v1/papers/{rest:path}``."""
    methods = route.methods or set()
    method = "GET" if "GET" in methods else sorted(methods)[0]
    path = re.sub(r"\{rest:path\}", "<id>", route.path)
    path = re.sub(r"\{(\w+)(?::\w+)?\}", r"<\1>", path)
    return f"`{method} {path}`"


def test_every_api_route_is_in_the_readme(small: Config) -> None:
    with open_engine(small) as engine:
        app = create_app(engine, small)
    api = [r for r in app.routes if isinstance(r, Route) and
           (r.path.startswith("/api/") or r.path in ("/openapi.json", "/healthz"))]  # fmt: skip
    assert len(api) > 15
    table = section("JSON API")
    missing = [as_documented(r) for r in api if as_documented(r) not in table]
    assert not missing, f"README's JSON API table lacks {missing}"


def test_every_search_parameter_has_a_row() -> None:
    rows = [line for line in section("JSON API").splitlines() if line.startswith("| `")]
    named = {n for row in rows for n in re.findall(r"`([a-z_]+)`", row.split("|")[1])}
    assert set(SEARCH_PARAMS) <= named, set(SEARCH_PARAMS) - named


def test_every_field_the_cli_prints_as_json_is_listed() -> None:
    text = section("Command line")
    listed = text[text.index("`search --json` prints") : text.index("Errors are one line")]
    for struct in (serialize.CliResult, serialize.CliHit, serialize.LocalStats,
                   serialize.EmbeddingProgress):  # fmt: skip
        fields = [f.encode_name for f in msgspec.structs.fields(struct)]
        missing = [f for f in fields if f"`{f}`" not in listed]
        assert not missing, f"README lacks {struct.__name__}'s {missing}"
