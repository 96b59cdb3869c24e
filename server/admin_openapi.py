"""The admin routes' part of the OpenAPI document (see server/admin.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from papersift.indexer.scheduler import JOBS
from papersift.server.schemas import Error
from papersift.server.schemas_admin import AdminRun, AdminStatus

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


def admin_paths(json: Build, *, enabled: bool = True) -> dict[str, Any]:
    """The admin operations; ``enabled=False`` (no ``[server] admin_token``): every admin
    request answers 404, with or without a token, and that is all the document promises."""
    if not enabled:
        off = json(Error, "Admin is disabled on this server (no `[server] admin_token`).")
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
        "401": json(Error, "The admin token is missing or wrong."),
        "404": json(Error, "No such job."),
        "503": json(Error, "This process runs no scheduler."),
    }
    return {
        "/api/v1/admin/status": {
            "get": {
                "operationId": "adminStatus",
                "summary": "Scheduled jobs: last and next runs, outcomes, embedding backlog",
                "security": secured,
                "responses": {"200": json(AdminStatus, "The status."), **errors},
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
                    "202": json(AdminRun, "The run started."),
                    "409": json(
                        Error,
                        "Not started: a run of this job is in progress, another job of "
                        "this server is writing to the data directory, or the job cannot "
                        "run here (the digest when e-mail is off).",
                    ),
                    **errors,
                },
            }
        },
    }
