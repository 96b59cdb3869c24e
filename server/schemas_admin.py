"""The admin API's responses, declared once as msgspec Structs (``server.admin`` encodes
them; ``server.openapi`` generates their OpenAPI components)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta, Struct

from papersift.engine.serialize import Count, DateTime, EmbeddingProgress
from papersift.indexer.scheduler import JOBS

JobName = Annotated[str, Meta(extra_json_schema={"enum": list(JOBS)})]


class AdminJob(Struct):
    name: JobName
    schedule: Annotated[str, Meta(description="Cron expression; empty: on demand.")]
    running: bool
    last_start: DateTime | None
    last_end: DateTime | None
    outcome: Annotated[
        Literal["ok", "error", "skipped", "stopped", "paused"] | None,
        Meta(
            description="Of the last run; skipped: the writer lock was held; stopped: the "
            "server shut down and the run ended at a checkpoint; paused: the embedding gave "
            "the writer to another job at a checkpoint and starts again after it; null while "
            "running."
        ),
    ]
    message: Annotated[str, Meta(description="The error, or who held the writer lock.")]
    counts: dict[str, int]
    runs: Count
    skipped: Count
    next_run: DateTime | None


class AdminStatus(Struct):
    papers: Count
    embedded: Count
    embedding_backlog: Count
    embedding: EmbeddingProgress
    embedding_line: str
    scheduler_running: bool
    jobs: list[AdminJob]


class AdminRun(Struct):
    job: JobName
    # A plain boolean, always true, in the schema: msgspec writes ``Literal[True]`` as
    # ``{"enum": [true]}`` with no type, and openapi-python-client then drops the model.
    started: Annotated[bool, Meta(extra_json_schema={"const": True})]


def status_body(snapshot: dict[str, Any]) -> AdminStatus:
    """The scheduler's snapshot (``JobRunner.snapshot``, which the admin page also shows)
    as the declared type: a field that drifts from it fails here, not in a client."""
    return msgspec.convert(snapshot, AdminStatus)
