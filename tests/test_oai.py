"""OAI-PMH parsing of recorded arXiv responses, and the polite fetcher against a local server."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from papersift.indexer.fetch import (
    Fetcher,
    FetchSettings,
    HarvestError,
    RetryableResponse,
    retry_after,
)
from papersift.indexer.oai import OaiError, parse_response
from tests.recorded_server import FIXTURES, RecordedServer, Reply, oai, serve

OAI = FIXTURES / "oai"


def read(name: str) -> bytes:
    return (OAI / name).read_bytes()


def test_list_records_arxivraw() -> None:
    page = parse_response(200, read("ListRecordsResponse.xml"))
    assert [p.arxiv_id for p in page.papers] == [
        "0704.0471", "0704.0716", "0704.0874", "0704.1109", "0704.1114", "0704.1586",
    ]  # fmt: skip
    assert page.token == "726959|1001" and page.complete_size == 58011 and page.cursor == 0
    assert page.versioned and page.response_date == date(2015, 1, 6)
    p = page.papers[1]
    assert (p.version, p.published, p.updated) == (4, date(2007, 4, 5), date(2008, 11, 14))
    assert p.categories == ("math-ph", "math.MP")  # primary first, as listed
    first = page.papers[0]
    assert [a.name for a in first.authors] == ["D.V. Shetty", "S.J. Yennello", "G.A. Souliotis"]
    assert first.doi == "10.1103/PhysRevC.76.024606"  # the erratum's DOI is dropped
    assert first.title.startswith("Density dependence of the symmetry energy and the nuclear")
    assert "\n" not in first.title and '"' in first.abstract  # &quot; decoded


def test_get_record_arxivraw() -> None:
    page = parse_response(200, read("GetRecordResponse.xml"))
    (p,) = page.papers
    assert (p.arxiv_id, p.version, p.published, p.updated) == (
        "1302.2146",
        2,
        date(2013, 2, 8),
        date(2013, 4, 2),
    )
    assert page.token is None
    assert p.license == "http://arxiv.org/licenses/nonexclusive-distrib/1.0/"


def test_list_records_arxiv_format_chain() -> None:
    pages = [parse_response(200, read(f"hepcrawl-page{i}.xml")) for i in (1, 2, 3)]
    assert [p.token for p in pages] == ["hepcrawl|4", "hepcrawl|8", None]
    papers = [p for page in pages for p in page.papers]
    assert len({p.arxiv_id for p in papers}) == 12
    assert not any(page.versioned for page in pages)  # the arXiv format has no version number
    planck = papers[0]
    assert planck.arxiv_id == "1601.03238"
    assert [a.name for a in planck.authors][:2] == ["Planck Collaboration", "Jieci Wang"]
    assert planck.categories == ("quant-ph", "gr-qc", "hep-th")
    assert planck.published == date(2016, 1, 13)


def test_deleted_header() -> None:
    page = parse_response(200, read("hepcrawl-deleted.xml"))
    assert page.deleted == ["1512.07978"] and page.papers == []


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("ErrorResponseBadArgument.xml", "badArgument"),
        ("ErrorResponseBadResumptionToken.xml", "badResumptionToken"),
        ("ErrorResponseBadVerb.xml", "badVerb"),
        ("ErrorResponseIdDoesNotExist.xml", "idDoesNotExist"),
        ("ErrorResponseNoRecordsMatch.xml", "noRecordsMatch"),
    ],
)
def test_error_envelopes(name: str, code: str) -> None:
    with pytest.raises(OaiError) as err:
        parse_response(200, read(name))
    assert err.value.code == code and "\n" not in str(err.value)


def test_truncated_response_is_retryable() -> None:
    body = read("ListRecordsResponse.xml")
    with pytest.raises(RetryableResponse):
        parse_response(200, body[: len(body) // 2])
    with pytest.raises(HarvestError, match="HTTP 404"):
        parse_response(404, b"<html><body>not found")


def test_entities_are_not_expanded(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    body = read("GetRecordResponse.xml").decode("utf-8")
    body = body.replace(
        "<OAI-PMH ",
        f'<!DOCTYPE OAI-PMH [<!ENTITY leak SYSTEM "file://{secret}">'
        '<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>\n<OAI-PMH ',
        1,
    ).replace("<title>", "<title>&leak;&b;", 1)
    (p,) = parse_response(200, body.encode("utf-8")).papers
    assert "TOP-SECRET" not in p.title and "aaaa" not in p.title
    assert p.title == "The Same-Sign Dilepton Signature of RPV/MFV SUSY"


def test_retry_after_header() -> None:
    assert retry_after("7") == 7.0
    assert retry_after(None) is None and retry_after("soon") is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # in the past


# -- the fetcher over HTTP ----------------------------------------------------------------


@pytest.fixture
def recorded() -> Iterator[RecordedServer]:
    yield from serve()


def fetcher(sleeps: list[float], **kw: object) -> Fetcher:
    settings = FetchSettings(**{"delay": 0.0, "backoff": 0.0, "retries": 2, "timeout": 10.0,
                                "mailto": "lab@example.org", **kw})  # type: ignore[arg-type]  # fmt: skip
    return Fetcher(settings, sleep=sleeps.append)


PARAMS = {
    "verb": "GetRecord",
    "identifier": "oai:arXiv.org:1302.2146",
    "metadataPrefix": "arXivRaw",
}


def test_503_with_retry_after_then_success(recorded: RecordedServer) -> None:
    recorded.add(
        "/oai2", PARAMS,
        Reply(b"busy", 503, {"Retry-After": "7"}),
        oai("GetRecordResponse.xml"),
    )  # fmt: skip
    sleeps: list[float] = []
    with fetcher(sleeps) as fx:
        page = fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert [p.arxiv_id for p in page.papers] == ["1302.2146"]
    assert 7.0 in sleeps and fx.requests == 2
    agent = recorded.requests[0][2]
    assert agent.startswith("papersift/") and "mailto:lab@example.org" in agent


def test_truncated_then_success(recorded: RecordedServer) -> None:
    whole = oai("GetRecordResponse.xml")
    recorded.add("/oai2", PARAMS, Reply(whole.body, truncate=400), whole)
    with fetcher([]) as fx:
        page = fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert len(page.papers) == 1 and fx.requests == 2


def test_gives_up_after_bounded_retries(recorded: RecordedServer) -> None:
    recorded.add("/oai2", PARAMS, Reply(b"down", 503))
    with fetcher([], retries=2) as fx, pytest.raises(HarvestError, match="after 3 attempts"):
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert len(recorded.requests) == 3
    with fetcher([], retries=0) as fx, pytest.raises(HarvestError) as err:  # not "1 attempts"
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert str(err.value).endswith(": giving up after 1 attempt (HTTP 503)")


def test_refuses_an_excessive_retry_after(recorded: RecordedServer) -> None:
    recorded.add("/oai2", PARAMS, Reply(b"later", 503, {"Retry-After": "86400"}))
    with fetcher([]) as fx, pytest.raises(HarvestError, match="retry after 86400"):
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert len(recorded.requests) == 1


def test_polite_delay_between_requests(recorded: RecordedServer) -> None:
    recorded.add("/oai2", PARAMS, oai("GetRecordResponse.xml"))
    sleeps: list[float] = []
    with fetcher(sleeps, delay=30.0) as fx:
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert len(sleeps) == 1 and 0 < sleeps[0] <= 30.0


def test_error_envelope_is_not_retried(recorded: RecordedServer) -> None:
    recorded.add("/oai2", PARAMS, oai("ErrorResponseIdDoesNotExist.xml"))
    with fetcher([]) as fx, pytest.raises(OaiError, match="idDoesNotExist"):
        fx.get(recorded.url("/oai2"), PARAMS, parse_response)
    assert len(recorded.requests) == 1


@pytest.mark.parametrize("url", ["ftp://example.org/oai2", "export.arxiv.org/oai2"])
def test_a_url_that_is_no_http_url_fails_at_once(url: str) -> None:
    """It failed the same way five times, a command waiting ~90 s to say so (`--url`)."""
    sleeps: list[float] = []
    with fetcher(sleeps, retries=4) as fx, pytest.raises(HarvestError, match="not an http"):
        fx.get(url, PARAMS, parse_response)
    assert fx.requests == 1 and not [s for s in sleeps if s > 0]


def test_no_connection_is_retried_as_the_setting_says() -> None:
    """``[harvest] retries`` says what is retried: a refused connection is, with pauses that
    double from 2 × ``delay_seconds``, so a harvest with no network gives up after ~90 s."""
    import socket

    from papersift.core.config import iter_settings
    from papersift.core.config_load import load_config
    from papersift.indexer.harvest import fetch_settings

    (doc,) = [h for s, k, _, h in iter_settings() if (s, k) == ("harvest", "retries")]
    assert "connection refused" in doc and "about 90 seconds" in doc
    with socket.socket() as s:  # a port nothing listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sleeps: list[float] = []
    with (
        Fetcher(fetch_settings(load_config(None, env={})), sleep=sleeps.append) as fx,
        pytest.raises(HarvestError, match="giving up after 5 attempts"),
    ):
        fx.get(f"http://127.0.0.1:{port}/oai2", PARAMS, parse_response)
    pauses = [p for p in sleeps if p > 3.0]  # the rest: the polite delay between requests
    assert pauses == [6.0, 12.0, 24.0, 48.0] and sum(pauses) == 90.0


UNRESOLVABLE = "http://nonexistent.invalid/oai"  # .invalid never resolves (RFC 6761)


def resolver_says_temporary() -> bool:
    """Whether this machine's resolver answers .invalid with EAI_AGAIN (no name server
    reachable) rather than "no such name": such a failure gets one retry."""
    import socket

    try:
        socket.getaddrinfo("nonexistent.invalid", 80)
    except socket.gaierror as exc:
        return exc.errno == socket.EAI_AGAIN
    raise AssertionError("nonexistent.invalid resolved")


def test_a_host_that_does_not_resolve_fails_at_once_in_one_line() -> None:
    """With no network a harvest logged four retries and gave up after 91 s ("giving up
    after 5 attempts ([Errno -2] Name or service not known)"); the schedule is for
    passing failures, and a name that does not resolve will not in 90 s either."""
    from papersift.core.config_load import load_config
    from papersift.indexer.fetch import UnresolvedHost
    from papersift.indexer.harvest import fetch_settings

    sleeps: list[float] = []
    settings = fetch_settings(load_config(None, env={}))  # the defaults: 4 retries
    with Fetcher(settings, sleep=sleeps.append) as fx, pytest.raises(UnresolvedHost) as err:
        fx.get(UNRESOLVABLE, PARAMS, parse_response)
    assert fx.requests == (2 if resolver_says_temporary() else 1) < settings.retries + 1
    message = str(err.value)
    assert message.startswith("nonexistent.invalid could not be resolved (") and "\n" not in message
    assert f"papersift needs network access to nonexistent.invalid ({UNRESOLVABLE})" in message


def test_a_temporary_name_failure_gets_one_retry_a_missing_name_none() -> None:
    import socket

    import httpx

    from papersift.indexer.fetch import name_error, name_retries

    try:
        httpx.get(UNRESOLVABLE)
    except httpx.ConnectError as exc:
        found = name_error(exc)  # under httpx's and httpcore's ConnectError
    assert isinstance(found, socket.gaierror)
    assert name_error(httpx.ConnectError("[Errno 111] Connection refused")) is None
    assert name_retries(socket.gaierror(socket.EAI_AGAIN, "Temporary failure")) == 1
    assert name_retries(socket.gaierror(socket.EAI_NONAME, "Name or service not known")) == 0
