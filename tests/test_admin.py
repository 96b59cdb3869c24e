"""The admin page and API over the real app: token checks, status, triggering runs."""

from __future__ import annotations

import base64
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from papersift.engine.datadir import DataDir
from papersift.engine.search import SearchEngine
from papersift.indexer.scheduler import JobRunner
from papersift.server.app import create_app
from tests.corpus import make_config
from tests.recorded_server import RecordedServer, Reply, oai, serve
from tests.web_helpers import parse_html

pytest_plugins = ["tests.web_fixtures"]

TOKEN = "s3cret-admin-token"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
LIST = {"verb": "ListRecords", "metadataPrefix": "arXiv"}
PAGE2 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|4"}
PAGE3 = {"verb": "ListRecords", "resumptionToken": "hepcrawl|8"}


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    gen = serve()
    server = next(gen)
    server.add("/oai2", LIST, oai("hepcrawl-page1.xml"))
    server.add("/oai2", PAGE2, oai("hepcrawl-page2.xml"))
    server.add("/oai2", PAGE3, oai("hepcrawl-page3.xml"))
    yield server
    gen.close()


@pytest.fixture
def admin(tmp_path: Path, recorded: RecordedServer) -> Iterator[tuple[TestClient, JobRunner]]:
    config = make_config(
        tmp_path,
        embedding={"float32_cache": False, "max_length": 64},
        harvest={"url": recorded.url("/oai2"), "metadata_prefix": "arXiv", "delay_seconds": 0,
                 "retries": 0},
        schedule={"harvest": "0 3 * * 1-5"},
        server={"admin_token": TOKEN},
    )  # fmt: skip
    engine = SearchEngine(DataDir(config))
    runner = JobRunner(engine, config)
    app = create_app(engine, config)
    app.state.jobs = runner
    runner.start()
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as client:
        yield client, runner
    runner.shutdown()
    engine.close()


def wait_runs(runner: JobRunner, job: str, n: int) -> None:
    deadline = time.monotonic() + 60
    while runner.status[job].runs < n:
        assert time.monotonic() < deadline, f"{job} did not finish"
        time.sleep(0.02)


def job_of(status: dict[str, Any], name: str) -> dict[str, Any]:
    return next(j for j in status["jobs"] if j["name"] == name)


def test_disabled_without_a_token(client: TestClient) -> None:
    for method, path in (("GET", "/api/v1/admin/status"), ("POST", "/api/v1/admin/run/harvest"),
                         ("GET", "/admin")):  # fmt: skip
        r = client.request(method, path, headers=BEARER)
        assert r.status_code == 404, path
        assert "admin_token" in r.text
    assert client.get("/api/v1/admin/status").json()["error"]["status"] == 404


def test_token_is_required(admin: tuple[TestClient, JobRunner]) -> None:
    client, _ = admin
    r = client.get("/api/v1/admin/status")
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["error"]["message"] == "Admin token missing or wrong."
    assert (
        client.get("/api/v1/admin/status", headers={"Authorization": "Bearer nope"}).status_code
        == 401
    )
    assert client.post("/api/v1/admin/run/harvest").status_code == 401
    page = client.get("/admin")
    assert page.status_code == 401 and page.headers["www-authenticate"].startswith("Basic")


@pytest.mark.slow
def test_status_and_run(admin: tuple[TestClient, JobRunner]) -> None:
    client, runner = admin
    r = client.get("/api/v1/admin/status", headers=BEARER)
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    status = r.json()
    harvest = job_of(status, "harvest")
    assert harvest["schedule"] == "0 3 * * 1-5" and harvest["next_run"]
    assert harvest["last_start"] is None and status["papers"] == 0
    r = client.post("/api/v1/admin/run/harvest", headers=BEARER)
    assert r.status_code == 202 and r.json() == {"job": "harvest", "started": True}
    wait_runs(runner, "harvest", 1)
    status = client.get("/api/v1/admin/status", headers=BEARER).json()
    harvest = job_of(status, "harvest")
    assert harvest["outcome"] == "ok" and harvest["last_start"] and harvest["last_end"]
    assert harvest["counts"]["added"] == 12 and harvest["counts"]["deleted"] == 0
    assert status["papers"] == 12 and status["embedding_backlog"] == 0
    assert client.post("/api/v1/admin/run/compile", headers=BEARER).status_code == 404


@pytest.mark.slow
def test_run_refused_while_running(
    admin: tuple[TestClient, JobRunner], recorded: RecordedServer
) -> None:
    client, runner = admin
    with harvest_held_on_page_two(client, runner, recorded):
        r = client.post("/api/v1/admin/run/harvest", headers=BEARER)
        assert r.status_code == 409 and "in progress" in r.json()["error"]["message"]
        assert job_of(client.get("/api/v1/admin/status", headers=BEARER).json(),
                      "harvest")["running"]  # fmt: skip


@contextmanager
def harvest_held_on_page_two(
    client: TestClient, runner: JobRunner, recorded: RecordedServer
) -> Iterator[None]:
    """A harvest started through the API and held while it asks for its second page (it
    holds the writer lock meanwhile); let go, and waited for, on leaving."""
    gate = threading.Event()
    recorded.add("/oai2", PAGE2, Reply(oai("hepcrawl-page2.xml").body, hold=gate))
    try:
        assert client.post("/api/v1/admin/run/harvest", headers=BEARER).status_code == 202
        deadline = time.monotonic() + 60
        while not any(p == PAGE2 for _, p, _ in list(recorded.requests)):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        yield
    finally:
        gate.set()
    wait_runs(runner, "harvest", 1)


def test_page_with_basic_auth_and_form(admin: tuple[TestClient, JobRunner]) -> None:
    client, runner = admin
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
    r = client.get("/admin", headers=basic)
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    doc = parse_html(r.text)
    rows = doc.cssselect("#jobs tbody tr")
    assert [row.get("data-job") for row in rows] == [
        "harvest", "enrich", "embed", "maintenance", "digest",
    ]  # fmt: skip
    assert doc.cssselect('meta[name="robots"]')[0].get("content") == "noindex"
    form = doc.cssselect('tr[data-job="embed"] form')[0]
    key = form.cssselect('input[name="key"]')[0].get("value")
    bad = client.post(form.get("action"), data={"key": "forged"}, headers=basic)
    assert bad.status_code == 403
    ok = client.post(form.get("action"), data={"key": key}, headers=basic)
    assert ok.status_code == 303 and ok.headers["location"] == "/admin?notice=embed-started"
    wait_runs(runner, "embed", 1)
    assert runner.status["embed"].outcome == "ok"
    assert client.post(form.get("action"), data={"key": key}).status_code == 401


@pytest.mark.slow
def test_run_refused_while_another_job_writes(
    admin: tuple[TestClient, JobRunner], recorded: RecordedServer
) -> None:
    """A run asked for while another job holds the writer lock would only wait and be
    skipped: the API says so (409, naming the writer), as it does for a run in progress."""
    client, runner = admin
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
    with harvest_held_on_page_two(client, runner, recorded):
        r = client.post("/api/v1/admin/run/embed", headers=BEARER)
        assert r.status_code == 409, r.text
        message = r.json()["error"]["message"]
        assert "harvest job is writing" in message and "embed run was not started" in message
        doc = parse_html(client.get("/admin", headers=basic).text)
        key = doc.cssselect('tr[data-job="embed"] input[name="key"]')[0].get("value")
        form = client.post("/admin/run/embed", data={"key": key}, headers=basic)
        assert form.headers["location"] == "/admin?notice=embed-skipped-writer"
        page = parse_html(client.get(form.headers["location"], headers=basic).text)
        notice = page.cssselect("p.notice")[0].text_content()
        assert notice.startswith("Another job is writing to the data directory; the embed run")
        assert runner.status["embed"].runs == 0


def test_digest_without_mail_is_refused_up_front(admin: tuple[TestClient, JobRunner]) -> None:
    """With no [mail] host the digest cannot send: a run asked for is refused (409, saying
    what to set) instead of answering 202 and failing in the background."""
    client, runner = admin
    assert not runner.config.mail.host
    r = client.post("/api/v1/admin/run/digest", headers=BEARER)
    assert r.status_code == 409, r.text
    assert r.json()["error"]["message"].startswith("E-mail is off: set [mail] host")
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
    doc = parse_html(client.get("/admin", headers=basic).text)
    row = doc.cssselect('tr[data-job="digest"]')[0]
    assert row.cssselect("button")[0].get("disabled") is not None  # the page says so first
    assert row.cssselect("span.muted")[0].text_content().startswith("E-mail is off: set [mail]")
    other = doc.cssselect('tr[data-job="embed"]')[0]
    assert other.cssselect("button")[0].get("disabled") is None
    key = row.cssselect('input[name="key"]')[0].get("value")
    form = client.post("/admin/run/digest", data={"key": key}, headers=basic)
    assert form.headers["location"] == "/admin?notice=digest-skipped-off"
    page = parse_html(client.get(form.headers["location"], headers=basic).text)
    assert "e-mail is off on this server" in page.cssselect("p.notice")[0].text_content()
    assert runner.status["digest"].runs == 0


def test_guessing_the_token_is_throttled_per_address(
    admin: tuple[TestClient, JobRunner],
) -> None:
    """Wrong tokens count against the client's address as sign-ins do (10 a minute): past
    that, even the right one is not compared (429 with Retry-After), and a page does not
    turn into the admin's view; a request without a token is no guess."""
    client, _ = admin
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
    assert client.get("/admin", headers=basic).status_code == 200  # the right one: no count
    admins = client.get("/categories", headers=basic)
    assert admins.headers["cache-control"] == "private, no-store"  # the admin's view
    assert all(client.get("/api/v1/admin/status").status_code == 401 for _ in range(12))
    wrong = {"Authorization": "Bearer not-the-token-at-all"}
    codes = [client.get("/api/v1/admin/status", headers=wrong).status_code for _ in range(10)]
    assert codes == [401] * 10
    for headers, path in ((BEARER, "/api/v1/admin/status"), (basic, "/admin")):
        r = client.get(path, headers=headers)
        assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1, r.text
        assert "Too many wrong admin tokens" in r.text
    page = client.get("/categories", headers=basic)  # a visitor's view now
    assert page.status_code == 200 and page.headers["cache-control"] != "private, no-store"


def test_a_short_admin_token_is_refused_in_one_line(tmp_path: Path) -> None:
    from papersift.core.config_load import load_config
    from papersift.core.errors import ConfigError

    (tmp_path / "config.toml").write_text('[server]\nadmin_token = "letmein"\n')
    with pytest.raises(ConfigError, match="admin_token must be at least 16 characters, got 7"):
        load_config(tmp_path / "config.toml", env={})
    with pytest.raises(ConfigError, match="at least 16 characters"):
        load_config(None, env={"PAPERSIFT_SERVER_ADMIN_TOKEN": "short"})
    assert load_config(None, env={"PAPERSIFT_SERVER_ADMIN_TOKEN": ""}).server.admin_token == ""


def test_notice_is_a_known_key(admin: tuple[TestClient, JobRunner]) -> None:
    """``?notice=`` names one of the page's own sentences; any other text is not shown."""
    client, _ = admin
    basic = {"Authorization": "Basic " + base64.b64encode(f"admin:{TOKEN}".encode()).decode()}
    spoof = client.get("/admin", params={"notice": "Token leaked: call 555-0100"}, headers=basic)
    assert spoof.status_code == 200 and not parse_html(spoof.text).cssselect("p.notice")
    assert "555-0100" not in spoof.text
    real = parse_html(client.get("/admin?notice=embed-started", headers=basic).text)
    assert [p.text_content() for p in real.cssselect("p.notice")] == [
        "The embed run has started; reload this page to follow it."
    ]
    running = parse_html(client.get("/admin?notice=harvest-skipped-running", headers=basic).text)
    notice = running.cssselect("p.notice")[0].text_content()
    assert notice.startswith("A run of harvest is in progress")
