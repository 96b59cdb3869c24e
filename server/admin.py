"""The admin status page and API: scheduled jobs, their last outcome, and on-demand runs.

Token-protected: ``Authorization: Bearer <[server] admin_token>`` (the page also takes HTTP
Basic with the token as password, so a browser can log in). With no token configured the
routes answer 404 saying how to enable them.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any
from urllib.parse import parse_qs

import anyio.to_thread
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from papersift.indexer.digest_run import MAIL_OFF_SENTENCE
from papersift.indexer.scheduler import JOBS, JobRunner, NotStarted
from papersift.server.admin_auth import checked, guess_wait, presented
from papersift.server.context import ctx
from papersift.server.lab_view import unlinked
from papersift.server.schemas_admin import AdminRun, status_body
from papersift.server.templating import fresh_json, page_meta, render

NO_STORE = {"Cache-Control": "no-store"}
# ``/admin?notice=KEY``: the page shows only these sentences, never text from the address.
NOTICES = {
    f"{job}-{key}": sentence.format(job=job)
    for job in JOBS
    for key, sentence in {
        "started": "The {job} run has started; reload this page to follow it.",
        "skipped-running": "A run of {job} is in progress; this one was skipped.",
        "skipped-writer": "Another job is writing to the data directory; the {job} run was "
        "not started. Try again when it finishes.",
        "skipped-off": "The {job} run was not started: e-mail is off on this server (set "
        "[mail] host and from_address in config.toml).",
    }.items()
}
DISABLED = (
    "The admin interface is disabled: set [server] admin_token (or PAPERSIFT_SERVER_ADMIN_TOKEN) "
    "to enable it."
)


def _token(request: Request) -> str:
    token: str = request.app.state.config.server.admin_token
    if not token:
        raise HTTPException(404, DISABLED)
    return token


def authorize(request: Request, *, basic: bool = False) -> str:
    """Check the admin token (constant-time); returns it. 401 when missing or wrong."""
    token = _token(request)
    verdict = checked(request, token, presented(request, basic))
    if verdict is None:
        wait = guess_wait(request)
        raise HTTPException(
            429,
            f"Too many wrong admin tokens from this address; wait {wait} seconds and try again.",
            headers={"Retry-After": str(wait)},
        )
    if not verdict:
        challenge = 'Basic realm="papersift admin"' if basic else 'Bearer realm="papersift admin"'
        raise HTTPException(
            401, "Admin token missing or wrong.", headers={"WWW-Authenticate": challenge}
        )
    return token


def _runner(request: Request) -> JobRunner:
    runner: JobRunner | None = getattr(request.app.state, "jobs", None)
    if runner is None:
        raise HTTPException(503, "No scheduler in this process; jobs run in `papersift serve`.")
    return runner


def _form_key(token: str, job: str) -> str:
    """A per-job form key derived from the token, so a cross-site form cannot start a run."""
    return hmac.new(token.encode(), f"run {job}".encode(), hashlib.sha256).hexdigest()


async def status_api(request: Request) -> Response:
    authorize(request)
    snapshot = await anyio.to_thread.run_sync(_runner(request).snapshot)
    return fresh_json(status_body(snapshot))


def _start(request: Request, job: str) -> NotStarted | None:
    """Start ``job``; None if started, else why not (``JobRunner.trigger``)."""
    if job not in JOBS:
        raise HTTPException(404, f"No job {job!r}; jobs: {', '.join(JOBS)}.")
    runner = _runner(request)
    return runner.trigger(job)


async def run_api(request: Request) -> Response:
    authorize(request)
    job = request.path_params["job"]
    refused = _start(request, job)
    if refused is not None:
        raise HTTPException(409, refused.message)
    return fresh_json(AdminRun(job, True), 202)


async def page(request: Request) -> Response:
    token = authorize(request, basic=True)
    runner = _runner(request)
    snapshot: dict[str, Any] = await anyio.to_thread.run_sync(runner.snapshot)
    context = page_meta(
        request, title="Admin", description="Scheduled jobs", path="/admin", robots="noindex"
    )
    c = ctx(request)
    context.update(
        status=snapshot,
        keys={job: _form_key(token, job) for job in JOBS},
        notice=NOTICES.get(request.query_params.get("notice", ""), ""),
        # Jobs that cannot run on this server: their button is off, with what to set.
        unavailable={"digest": MAIL_OFF_SENTENCE} if not c.config.mail.host else {},
        unlinked=await c.call(unlinked, c.engine, c.config.lab),
    )
    response = render(request, "admin.html", context)
    response.headers["Cache-Control"] = "no-store"
    return response


async def page_run(request: Request) -> Response:
    token = authorize(request, basic=True)
    job = request.path_params["job"]
    body = await request.body()
    if len(body) > 4096:
        raise HTTPException(413, "Form too large.")
    key = parse_qs(body.decode("utf-8", "replace")).get("key", [""])[0]
    if job not in JOBS or not hmac.compare_digest(key.encode(), _form_key(token, job).encode()):
        raise HTTPException(403, "This form is not valid here; reload the admin page.")
    refused = _start(request, job)
    notice = "started" if refused is None else f"skipped-{refused.reason}"
    return RedirectResponse(f"/admin?notice={job}-{notice}", status_code=303)


routes = [
    Route("/admin", page, methods=["GET"]),
    Route("/admin/run/{job}", page_run, methods=["POST"]),
    Route("/api/v1/admin/status", status_api, methods=["GET"]),
    Route("/api/v1/admin/run/{job}", run_api, methods=["POST"]),
]
