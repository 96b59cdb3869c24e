"""The admin routes' part of the OpenAPI document (see server/admin.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from papersift.indexer.scheduler import JOBS

Build = Callable[..., dict[str, Any]]
_STR = {"type": "string"}
SECURITY_SCHEMES = {
    "adminToken": {
        "type": "http",
        "scheme": "bearer",
        "description": "The server's [server] admin_token. Without one configured the admin "
        "routes answer 404.",
    }
}


def admin_schemas(obj: Build, array: Build, ref: Build) -> dict[str, Any]:
    when = {"type": ["string", "null"], "format": "date-time"}
    job = obj(
        {
            "name": {"enum": list(JOBS)},
            "schedule": {"type": "string", "description": "Cron expression; empty: on demand."},
            "running": {"type": "boolean"},
            "last_start": when,
            "last_end": when,
            "outcome": {"enum": ["ok", "error", None]},
            "message": {"type": "string"},
            "counts": {"type": "object", "additionalProperties": {"type": "integer"}},
            "runs": {"type": "integer", "minimum": 0},
            "skipped": {"type": "integer", "minimum": 0},
            "next_run": when,
        }
    )
    count = {"type": "integer", "minimum": 0}
    return {
        "AdminJob": job,
        "AdminStatus": obj(
            {
                "papers": count,
                "embedded": count,
                "embedding_backlog": count,
                "embedding": {"type": "object", "description": "see EmbeddingProgress"},
                "embedding_line": {"type": "string"},
                "scheduler_running": {"type": "boolean"},
                "jobs": array(ref("AdminJob")),
            }
        ),
        "AdminRun": obj({"job": {"enum": list(JOBS)}, "started": {"const": True}}),
    }


def admin_paths(json: Build, *, enabled: bool = True) -> dict[str, Any]:
    """The admin operations; ``enabled=False`` (no ``[server] admin_token``): every admin
    request answers 404, with or without a token, and that is all the document promises."""
    if not enabled:
        off = json("Error", "Admin is disabled on this server (no `[server] admin_token`).")
        return {
            "/api/v1/admin/status": {
                "get": {
                    "operationId": "adminStatus",
                    "summary": "Scheduled jobs (disabled on this server: 404)",
                    "responses": {"404": off},
                }
            },
            "/api/v1/admin/run/{job}": {
                "post": {
                    "operationId": "adminRun",
                    "summary": "Start a job now (disabled on this server: 404)",
                    "parameters": [{"name": "job", "in": "path", "required": True, "schema": _STR}],
                    "responses": {"404": off},
                }
            },
        }
    secured: list[dict[str, list[str]]] = [{"adminToken": []}]
    errors = {
        "401": json("Error", "The admin token is missing or wrong."),
        "404": json("Error", "No such job."),
        "503": json("Error", "This process runs no scheduler."),
    }
    return {
        "/api/v1/admin/status": {
            "get": {
                "operationId": "adminStatus",
                "summary": "Scheduled jobs: last and next runs, outcomes, embedding backlog",
                "security": secured,
                "responses": {"200": json("AdminStatus", "The status."), **errors},
            }
        },
        "/api/v1/admin/run/{job}": {
            "post": {
                "operationId": "adminRun",
                "summary": "Start a job now",
                "security": secured,
                "parameters": [
                    {"name": "job", "in": "path", "required": True, "schema": {"enum": list(JOBS)}}
                ],
                "responses": {
                    "202": json("AdminRun", "The run started."),
                    "409": json("Error", "A run of this job is in progress; skipped."),
                    **errors,
                },
            }
        },
    }
